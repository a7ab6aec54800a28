package session_test

// Tests of the modes' decisions that fixtures cannot reach: which writes acceptEdits lets run
// unasked (a symbolic link out of the workspace, a protected path, a path above it all ask).

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// askFace records the calls it is asked about and denies them.
type askFace struct {
	mu    sync.Mutex
	asked []string
}

func (*askFace) Emit(*session.Session, event.Event) {}
func (f *askFace) Ask(_ context.Context, _ *session.Session, q session.Approval) (session.Answer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, q.Call.ID)
	f.mu.Unlock()
	return session.Answer{Decision: "deny"}, nil
}
func (*askFace) Warn(*session.Session, string) {}
func (*askFace) Elicit(context.Context, *session.Session, session.Elicitation) (session.ElicitAnswer, error) {
	return session.ElicitAnswer{}, errors.New("no editor")
}

func TestAcceptEditsAsksOutsideTheWorkspace(t *testing.T) {
	isolate(t)
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{root})
	defer h.Close()
	f := &askFace{}
	s, err := h.New(session.Config{Cwd: root, Mode: session.ModeAcceptEdits, ToolExecution: "sequential"}, session.Options{Face: f})
	if err != nil {
		t.Fatal(err)
	}
	write := func(id, path string) llm.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x\n"})
		return llm.ToolCall{ID: id, Name: "write", Arguments: args}
	}
	calls := []llm.ToolCall{
		write("in", "a.txt"),
		write("link", "link/b.txt"),
		write("vscode", ".vscode/settings.json"),
		write("hooks", ".git/hooks/pre-commit"),
		write("above", filepath.Join(outside, "c.txt")),
	}
	if _, err := s.Execute(context.Background(), calls, ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"link", "vscode", "hooks", "above"}
	if !slices.Equal(f.asked, want) {
		t.Errorf("asked about %v, want %v (a.txt alone runs unasked in acceptEdits)", f.asked, want)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
		t.Errorf("a.txt was not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "b.txt")); err == nil {
		t.Error("a write through a link out of the workspace ran")
	}

	// In default mode, the same write inside asks.
	if err := s.SetMode(session.ModeDefault); err != nil {
		t.Fatal(err)
	}
	f.asked = nil
	if _, err := s.Execute(context.Background(), []llm.ToolCall{write("in2", "d.txt")}, ""); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.asked, []string{"in2"}) {
		t.Errorf("default mode asked about %v, want [in2]", f.asked)
	}
}

// Issue 31 H4 and M7: in acceptEdits and auto, a write or edit that would change a path
// other programs load commands from (package protected) asks, whether it is named directly
// (.git/commondir, .GIT/config, .claude/settings.json...) or reached through a symbolic
// link, a dangling one included (the write would create the link's target), through a
// link to a link, or through a link to a folder. The writes are denied, and nothing is
// created; a plain file in docs/ still runs unasked.
func TestEditModesAskForProtectedPathsAndLinksIntoThem(t *testing.T) {
	isolate(t)
	for _, mode := range []string{session.ModeAcceptEdits, session.ModeAuto} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"docs", ".git/objects", ".claude"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			links := map[string]string{
				"docs/settings.md": "../.pid/settings.json",
				"docs/tasks.md":    "../.vscode/tasks.json",
				"docs/envrc.md":    "../.envrc",
				"docs/mcp.md":      "../.mcp.json",
				"docs/hook.md":     "../.git/hooks/post-checkout",
				"docs/command.md":  "../.pid/commands/x.md",
				"docs/chain.md":    "chain2.md", // a link to a link
				"docs/chain2.md":   "../.devcontainer/devcontainer.json",
				"docs/agent":       "../.claude",              // a link to a folder (which exists)
				"docs/zed.md":      root + "/.ZED/tasks.json", // absolute, another case
				"docs/idea":        "../.idea",                // a dangling link to a folder
			}
			for name, target := range links {
				if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			h := session.NewHost(session.HostOptions{})
			h.SetUp([]string{root})
			defer h.Close()
			f := &askFace{}
			s, err := h.New(session.Config{Cwd: root, Mode: mode, ToolExecution: "sequential"}, session.Options{Face: f})
			if err != nil {
				t.Fatal(err)
			}
			write := func(id, path string) llm.ToolCall {
				args, _ := json.Marshal(map[string]string{"path": path, "content": "[core]\n\tfsmonitor = touch /tmp/owned\n"})
				return llm.ToolCall{ID: id, Name: "write", Arguments: args}
			}
			calls := []llm.ToolCall{
				write("ok", "docs/ok.md"),
				write("settings", "docs/settings.md"),
				write("tasks", "docs/tasks.md"),
				write("envrc", "docs/envrc.md"),
				write("mcp", "docs/mcp.md"),
				write("hook", "docs/hook.md"),
				write("command", "docs/command.md"),
				write("chain", "docs/chain.md"),
				write("agent", "docs/agent/settings.json"),
				write("zed", "docs/zed.md"),
				write("idea", "docs/idea/workspace.xml"),
				// M7: named directly.
				write("commondir", ".git/commondir"),
				write("module", ".git/modules/sub/config"),
				write("attributes", ".git/info/attributes"),
				write("claude", ".claude/settings.json"),
				write("GIT", ".GIT/config"),
				write("worktree", ".git/worktrees/w/config.worktree"),
				write("nested", "vendor/lib/.git/config"),
			}
			if _, err := s.Execute(context.Background(), calls, ""); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, c := range calls[1:] {
				want = append(want, c.ID)
			}
			if !slices.Equal(f.asked, want) {
				t.Errorf("asked about %v,\nwant %v (docs/ok.md alone runs unasked)", f.asked, want)
			}
			if _, err := os.Stat(filepath.Join(root, "docs/ok.md")); err != nil {
				t.Errorf("docs/ok.md was not written: %v", err)
			}
			for _, p := range []string{".pid", ".vscode", ".envrc", ".mcp.json", ".git/hooks", ".devcontainer", ".claude/settings.json", ".ZED", ".idea",
				".git/commondir", ".git/modules", ".git/info", ".GIT", ".git/worktrees", "vendor"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("%s was created without asking", p)
				}
			}
		})
	}
}

// Issue 31: the permission rules on paths decide on where a path leads too: an allow rule
// on docs/** does not let a write through docs/x.md -> ../.envrc (dangling) or into src/
// run unasked, and a deny rule on secrets/** denies a read through a link into it. A plain
// file under docs/ is still allowed by the rule.
func TestPathRulesFollowLinks(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	for name, content := range map[string]string{"secrets/key": "k\n", "src/a.go": "package a\n", "docs/plain.md": "p\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"docs/envrc.md": "../.envrc", "docs/src.md": "../src/new.go", "docs/key.md": "../secrets/key"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{root})
	defer h.Close()
	f := &askFace{}
	perms := json.RawMessage(`{"tools":{"write":[{"pattern":"docs/**","decision":"allow"}],"read":[{"pattern":"secrets/**","decision":"deny"}]}}`)
	s, err := h.New(session.Config{Cwd: root, ToolExecution: "sequential", Permissions: perms}, session.Options{Face: f})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, tool, path string) llm.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x\n"})
		if tool == "read" {
			args, _ = json.Marshal(map[string]string{"path": path})
		}
		return llm.ToolCall{ID: id, Name: tool, Arguments: args}
	}
	out, err := s.Execute(context.Background(), []llm.ToolCall{
		call("plain", "write", "docs/new.md"), call("envrc", "write", "docs/envrc.md"), call("src", "write", "docs/src.md"), call("key", "read", "docs/key.md"),
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"envrc", "src"}; !slices.Equal(f.asked, want) {
		t.Errorf("asked about %v, want %v", f.asked, want)
	}
	if _, err := os.Lstat(filepath.Join(root, ".envrc")); err == nil {
		t.Error(".envrc was created")
	}
	for _, r := range out.Messages {
		if r.ToolCallID == "key" && (!r.IsError || !strings.Contains(r.Text(), "denied")) {
			t.Errorf("the read through a link into secrets/: %+v, want denied", r)
		}
		if r.ToolCallID == "plain" && r.IsError {
			t.Errorf("docs/new.md: %+v", r)
		}
	}
}
