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
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
func (*askFace) Elicit(context.Context, *session.Session, string, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return nil, errors.New("no editor")
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
