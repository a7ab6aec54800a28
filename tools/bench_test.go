package tools_test

// Benchmarks of what os.Root costs the file tools: a read of a small file, and a find and
// a grep over a tree of about 10,000 files.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// benchTool returns the built-in tool named name acting in ws.
func benchTool(b *testing.B, ws *tools.Workspace, name string) toolexec.Tool {
	b.Helper()
	for _, t := range tools.New(ws) {
		if t.Name == name {
			return t
		}
	}
	b.Fatalf("no tool %s", name)
	return toolexec.Tool{}
}

// runTool calls the tool's Execute directly (no schema pass), failing on an error.
func runTool(b *testing.B, t toolexec.Tool, args string) toolexec.Result {
	res, err := t.Execute(context.Background(), toolexec.Call{ID: "b", Name: t.Name, Args: json.RawMessage(args)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func BenchmarkReadSmall(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "a", "b", "c", "small.go")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package c\n\nfunc F() int { return 1 }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := tools.NewWorkspace(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	read := benchTool(b, ws, tools.NameRead)
	for b.Loop() {
		runTool(b, read, `{"path":"a/b/c/small.go"}`)
	}
}

// benchTree makes 100 folders of 100 files (10,100 entries) under a fresh workspace.
func benchTree(b *testing.B) *tools.Workspace {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i/10), fmt.Sprintf("sub%d", i%10))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 100 {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.go", j)), []byte("package x\n\nfunc F() {}\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := tools.NewWorkspace(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	return ws
}

func BenchmarkFind10k(b *testing.B) {
	find := benchTool(b, benchTree(b), tools.NameFind)
	for b.Loop() {
		runTool(b, find, `{"pattern":"f099.go"}`)
	}
}

func BenchmarkGrep10k(b *testing.B) {
	grep := benchTool(b, benchTree(b), tools.NameGrep)
	for b.Loop() {
		runTool(b, grep, `{"pattern":"nomatch"}`)
	}
}
