package tools_test

// Files through the editor (EditorFiles): read, write and edit see the editor's buffers and
// write into them, never the disk; the stale-edit guard compares the editor's text.

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/tools"
)

// buffers is a fake editor: open buffers by path, and the writes it received.
type buffers struct {
	mu     sync.Mutex
	text   map[string]string
	writes []string
}

func (b *buffers) files() tools.EditorFiles {
	return tools.EditorFiles{
		Read: func(_ context.Context, path string) (string, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.text[path], nil
		},
		Write: func(_ context.Context, path, text string) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.text[path] = text
			b.writes = append(b.writes, path)
			return nil
		},
	}
}

func (b *buffers) set(path, text string) {
	b.mu.Lock()
	b.text[path] = text
	b.mu.Unlock()
}

func TestEditorFiles(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"a.go": "on disk\n"})
	path := filepath.Join(dir, "a.go")
	ed := &buffers{text: map[string]string{path: "unsaved line one\nline two\n"}}
	ws.UseEditorFiles(ed.files())

	// read shows the buffer, not the disk.
	out := mustOK(t, call(t, ws, "read", `{"path":"a.go"}`))
	if !strings.Contains(out, "unsaved line one") || strings.Contains(out, "on disk") {
		t.Fatalf("read did not show the editor's buffer:\n%s", out)
	}

	// edit applies to the buffer and writes through the editor; the disk is untouched.
	mustOK(t, call(t, ws, "edit", `{"path":"a.go","edits":[{"oldText":"line two","newText":"line 2"}]}`))
	if got := ed.text[path]; got != "unsaved line one\nline 2\n" {
		t.Fatalf("buffer after edit = %q", got)
	}
	if got := readFile(t, path); got != "on disk\n" {
		t.Fatalf("the disk changed: %q", got)
	}

	// The stale guard looks at the editor's text: a change in the buffer since the last
	// read refuses the next edit.
	ed.set(path, "someone typed here\n")
	mustFail(t, call(t, ws, "edit", `{"path":"a.go","edits":[{"oldText":"line 2","newText":"x"}]}`), "a.go changed in the editor since you last read it")

	// write creates through the editor too.
	mustOK(t, call(t, ws, "write", `{"path":"new.txt","content":"hello\n"}`))
	if got := ed.text[filepath.Join(dir, "new.txt")]; got != "hello\n" {
		t.Fatalf("write did not go through the editor: %q", got)
	}
	if len(ed.writes) != 2 {
		t.Fatalf("editor writes = %v, want 2", ed.writes)
	}
}
