package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/session"
)

// problemsFace is an editor that reports the given problems, and records what it was asked.
type problemsFace struct {
	face
	ds []problems.Diagnostic
	// starting are the files whose language server the editor says was still starting.
	starting []string
	mu       sync.Mutex
	asked    [][]string
}

func (f *problemsFace) ReportsDiagnostics() bool { return true }

func (f *problemsFace) Diagnostics(_ context.Context, _ *session.Session, paths []string, _ session.DiagnosticsWait) (session.Problems, error) {
	f.mu.Lock()
	f.asked = append(f.asked, paths)
	f.mu.Unlock()
	return session.Problems{Diagnostics: f.ds, Starting: f.starting}, nil
}

// The diagnostics tool: without a path it asks the editor for every file (no paths) and lists
// at most 50 files; with a path it asks for that file alone; severity 1 leaves warnings out.
func TestDiagnosticsTool(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	f := &problemsFace{}
	for i := range 60 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d.go", i))
		f.ds = append(f.ds, problems.Diagnostic{Path: p, Severity: 1, Message: "bad"}, problems.Diagnostic{Path: p, Severity: 2, Message: "meh"})
	}
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{dir})
	defer h.Close()
	s, err := h.New(session.Config{Cwd: dir}, session.Options{Face: f})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args string) string {
		t.Helper()
		out, err := s.Execute(context.Background(), []llm.ToolCall{{ID: "d", Name: "diagnostics", Arguments: json.RawMessage(args)}}, "")
		if err != nil || out.Messages[0].IsError {
			t.Fatalf("diagnostics %s: %v %+v", args, err, out.Messages)
		}
		return out.Messages[0].Text()
	}
	all := run(`{}`)
	if n := strings.Count(all, ": 1 errors, 1 warnings"); n != 50 || !strings.HasSuffix(all, "... and 10 more files with problems (ask about one with path)") {
		t.Errorf("%d files listed; text ends %q", n, all[max(0, len(all)-80):])
	}
	one := run(`{"path": "f07.go", "severity": 1}`)
	if one != "f07.go: 1 errors, 0 warnings\nL1:1 error: bad" {
		t.Errorf("one file = %q", one)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) != 2 || len(f.asked[0]) != 0 || len(f.asked[1]) != 1 || f.asked[1][0] != filepath.Join(dir, "f07.go") {
		t.Errorf("asked %q", f.asked)
	}
}

// The diagnostics tool of a file whose language server the editor says was still starting:
// what the editor has, then that its problems may come later.
func TestDiagnosticsToolStarting(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "a.ts")
	f := &problemsFace{starting: []string{p}}
	h := session.NewHost(session.HostOptions{})
	h.SetUp([]string{dir})
	defer h.Close()
	s, err := h.New(session.Config{Cwd: dir}, session.Options{Face: f})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Execute(context.Background(), []llm.ToolCall{{ID: "d", Name: "diagnostics", Arguments: json.RawMessage(`{"path": "a.ts"}`)}}, "")
	if err != nil || out.Messages[0].IsError {
		t.Fatalf("diagnostics: %v %+v", err, out.Messages)
	}
	want := "No problems reported in a.ts.\nThe language server for a.ts was still starting: problems may come later; call diagnostics before you finish."
	if got := out.Messages[0].Text(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}
