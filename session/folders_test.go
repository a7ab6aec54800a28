// Extra workspace folders of a session (Options.Folders, ACP's additionalDirectories): the
// file tools reach them with OwnFolders, and not without them; a bad folder is refused.

package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// readResult runs one prompt whose scripted model reads path, and returns the read's result.
func readResult(t *testing.T, h *session.Host, cwd string, folders []string, path string) llm.Message {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"path": path})
	turns := []llm.Turn{
		{Content: []llm.Content{{Type: llm.ContentToolCall, ID: "r1", Name: "read", Arguments: args}}},
		{Content: []llm.Content{llm.Text("done")}},
	}
	s, err := h.New(session.Config{Cwd: cwd, Model: &session.ModelConfig{Provider: "script", Turns: turns}},
		session.Options{Face: &recordingFace{}, Folders: folders})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("read it")})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Messages {
		if m.Role == llm.RoleToolResult && m.ToolCallID == "r1" {
			return m
		}
	}
	t.Fatalf("no result of the read in %+v", res.Messages)
	return llm.Message{}
}

func TestExtraFoldersAreWorkspaceFolders(t *testing.T) {
	isolate(t)
	h := session.NewHost(session.HostOptions{OwnFolders: true})
	h.SetUp(nil)
	t.Cleanup(h.Close)
	cwd, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "notes.txt")
	if err := os.WriteFile(file, []byte("in the other folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := readResult(t, h, cwd, []string{other}, file)
	if got.IsError || !strings.Contains(got.Content[0].Text, "in the other folder") {
		t.Errorf("read in an extra folder: %+v", got)
	}
	// Without the folder the same read is outside the workspace.
	got = readResult(t, h, cwd, nil, file)
	if !got.IsError {
		t.Errorf("read outside the workspace succeeded: %+v", got)
	}
	for _, bad := range []string{"relative/dir", filepath.Join(other, "missing")} {
		_, err := h.New(session.Config{Cwd: cwd}, session.Options{Face: &recordingFace{}, Folders: []string{bad}})
		if !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), bad) {
			t.Errorf("folder %q: %v, want ErrInvalid naming it", bad, err)
		}
	}
}

// A fork of the whole conversation (ForkAll) has every item of the original, and the
// folders of its own Options: its file tools reach the extra folder the original lacked.
func TestForkAllWithFolders(t *testing.T) {
	isolate(t)
	h := session.NewHost(session.HostOptions{OwnFolders: true})
	h.SetUp(nil)
	t.Cleanup(h.Close)
	cwd, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "notes.txt")
	os.WriteFile(file, []byte("forked sees it\n"), 0o644)
	args, _ := json.Marshal(map[string]string{"path": file})
	turns := []llm.Turn{
		{Content: []llm.Content{llm.Text("first")}},
		{Content: []llm.Content{{Type: llm.ContentToolCall, ID: "r1", Name: "read", Arguments: args}}},
		{Content: []llm.Content{llm.Text("done")}},
	}
	s, err := h.New(session.Config{Cwd: cwd, Model: &session.ModelConfig{Provider: "script", Turns: turns}}, session.Options{Face: &recordingFace{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser("hello")}); err != nil {
		t.Fatal(err)
	}
	f, items, err := h.Fork(s.ID(), session.ForkAll, session.Options{Face: &recordingFace{}, Folders: []string{other}})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(s.Items()); len(items) != want || want != 2 {
		t.Errorf("the fork has %d items, the original %d (want 2)", len(items), want)
	}
	res, err := f.Prompt(context.Background(), []llm.Message{llm.NewUser("read it")})
	if err != nil {
		t.Fatal(err)
	}
	var read *llm.Message
	for i, m := range res.Messages {
		if m.Role == llm.RoleToolResult {
			read = &res.Messages[i]
		}
	}
	if read == nil || read.IsError || !strings.Contains(read.Content[0].Text, "forked sees it") {
		t.Errorf("the fork's read in its extra folder: %+v", read)
	}
}
