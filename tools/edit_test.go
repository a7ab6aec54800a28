package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/tools"
)

// readThen reads path so the agent may change it.
func readThen(t *testing.T, ws *tools.Workspace, path string) {
	t.Helper()
	mustOK(t, call(t, ws, "read", jsonArgs(t, map[string]string{"path": path})))
}

func TestEditAppliesAllEdits(t *testing.T) {
	src := "package main\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 2\n}\n"
	ws, dir := newWorkspace(t, map[string]string{"m.go": src})
	p := filepath.Join(dir, "m.go")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	readThen(t, ws, "m.go")
	r := call(t, ws, "edit", `{"path":"m.go","edits":[
		{"oldText":"func b() int {\n\treturn 2","newText":"func b() int {\n\treturn 20"},
		{"oldText":"return 1","newText":"return 10"}]}`)
	if got := mustOK(t, r); got != "Edited m.go: 2 edits applied, +2 -2 lines, first change at line 4." {
		t.Errorf("got %q", got)
	}
	want := strings.ReplaceAll(strings.ReplaceAll(src, "return 1", "return 10"), "return 2", "return 20")
	if got := readFile(t, p); got != want {
		t.Errorf("file holds %q", got)
	}
	d := r.details.(tools.EditDetails)
	wantDiff := "--- a/m.go\n+++ b/m.go\n@@ -1,9 +1,9 @@\n package main\n \n func a() int {\n-\treturn 1\n+\treturn 10\n }\n \n func b() int {\n-\treturn 2\n+\treturn 20\n }\n"
	if d.Diff != wantDiff || d.FirstChangedLine != 4 || d.Added != 2 || d.Removed != 2 {
		t.Errorf("details %+v\nwant diff %q", d, wantDiff)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not kept", fi.Mode())
	}
	// The agent's own edit updated what it saw: a second edit needs no new read.
	mustOK(t, call(t, ws, "edit", `{"path":"m.go","edits":[{"oldText":"return 10","newText":"return 11"}]}`))
}

func TestEditAllOrNothing(t *testing.T) {
	src := "alpha\nbeta\ngamma\nbeta\ndelta\n"
	ws, dir := newWorkspace(t, map[string]string{"f.txt": src})
	p := filepath.Join(dir, "f.txt")
	readThen(t, ws, "f.txt")
	// edits[0] is fine, edits[1] matches twice, edits[2] matches nowhere: nothing applies,
	// and the error names each bad edit.
	r := call(t, ws, "edit", `{"path":"f.txt","edits":[
		{"oldText":"alpha","newText":"ALPHA"},
		{"oldText":"beta","newText":"BETA"},
		{"oldText":"epsilon","newText":"E"}]}`)
	mustFail(t, r,
		"edits[1]: oldText matches 2 times in f.txt (at lines 2, 4); include more surrounding lines",
		"edits[2]: oldText was not found in f.txt",
		"No edits were applied; f.txt is unchanged.")
	if strings.Contains(r.text, "edits[0]") {
		t.Errorf("the good edit is blamed: %s", r.text)
	}
	if got := readFile(t, p); got != src {
		t.Fatalf("a failed edit changed the file: %q", got)
	}
	// Overlapping edits are refused too.
	mustFail(t, call(t, ws, "edit", `{"path":"f.txt","edits":[{"oldText":"gamma\nbeta","newText":"x"},{"oldText":"alpha\nbeta\ngamma","newText":"y"}]}`),
		"edits[0] and edits[1] overlap in f.txt (at line 3)")
	// Overlapping occurrences of one oldText count: "aa" is not unique in "aaa".
	testfs.WriteFiles(t, dir, map[string]string{"a.txt": "aaa\n"})
	readThen(t, ws, "a.txt")
	mustFail(t, call(t, ws, "edit", `{"path":"a.txt","edits":[{"oldText":"aa","newText":"b"}]}`), "matches 2 times")
	// An edit that changes nothing is an error, not a silent success.
	mustFail(t, call(t, ws, "edit", `{"path":"f.txt","edits":[{"oldText":"delta","newText":"delta"}]}`), "the edits change nothing")
	// A whitespace slip gets a hint naming the line.
	mustFail(t, call(t, ws, "edit", `{"path":"f.txt","edits":[{"oldText":"  gamma","newText":"g"}]}`), "oldText matches line 3 except for indentation")
	if got := readFile(t, p); got != src {
		t.Fatalf("a failed edit changed the file: %q", got)
	}
}

// An oldText that is not found but would match once its indentation, the spaces at its
// line ends or read's line-number prefixes are left out gets a hint saying which and where;
// nothing is applied on a hint.
func TestEditHints(t *testing.T) {
	src := "package main\n\nfunc a() int {\n\tif true {\n\t\treturn 1\n\t}\n\treturn 2\n}\n\nvar s = []string{\n    \"x\",\n}\n"
	ws, dir := newWorkspace(t, map[string]string{"m.go": src})
	readThen(t, ws, "m.go")
	cases := []struct {
		name, oldText, want string
	}{
		{"spaces for tabs", "\tif true {\n    return 1\n\t}", "oldText matches line 4 except for indentation: the file indents with tabs. Copy the lines as read shows them."},
		{"tabs for spaces", "var s = []string{\n\t\"x\",\n}", "oldText matches line 10 except for indentation: the file indents with spaces."},
		{"too little indentation", "func a() int {\n\tif true {\n\treturn 1", "oldText matches line 3 except for indentation: the file's line starts with 2 tabs, oldText's with 1 tab."},
		{"trailing spaces", "func a() int {  \n\tif true {", "oldText matches line 3 except for the white space at the ends of lines."},
		{"read's prefixes", "     5\t\t\treturn 1\n     6\t\t}", "oldText matches line 5 once read's line-number prefixes (like \"     2\\t\") are taken off: copy the text after the tab, in newText too."},
		{"prefixes and indentation", "     7\t    return 2", "oldText matches line 7 once read's line-number prefixes (like \"     2\\t\") are taken off, except for indentation: the file indents with tabs."},
	}
	for _, c := range cases {
		args, _ := json.Marshal(map[string]any{"path": "m.go", "edits": []map[string]string{{"oldText": c.oldText, "newText": "CHANGED"}}})
		r := call(t, ws, "edit", string(args))
		mustFail(t, r, "edits[0]: oldText was not found in m.go.", c.want, "No edits were applied; m.go is unchanged.")
		if got := readFile(t, filepath.Join(dir, "m.go")); got != src {
			t.Fatalf("%s: a hint applied the edit: %q", c.name, got)
		}
	}
	// Text found nowhere, even loosely, gets no hint.
	r := call(t, ws, "edit", `{"path":"m.go","edits":[{"oldText":"func c()","newText":"x"}]}`)
	mustFail(t, r, "edits[0]: oldText was not found in m.go.")
	if strings.Contains(r.text, "matches") {
		t.Errorf("a hint for text that is nowhere: %s", r.text)
	}
}

func TestEditManyMatchesListsFirstLines(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"x": strings.Repeat("dup\n", 14)})
	readThen(t, ws, "x")
	mustFail(t, call(t, ws, "edit", `{"path":"x","edits":[{"oldText":"dup","newText":"d"}]}`),
		"matches 14 times in x (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, and 4 more)")
}

func TestEditRefusals(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"unread.txt": "hello\n"})
	mustFail(t, call(t, ws, "edit", `{"path":"unread.txt","edits":[{"oldText":"hello","newText":"bye"}]}`),
		"unread.txt exists but you have not read it in this session; read it before changing it")
	mustFail(t, call(t, ws, "edit", `{"path":"missing.txt","edits":[{"oldText":"a","newText":"b"}]}`),
		"file not found: missing.txt", "use write")
	// Schema: an empty oldText, no edits, an unknown field (on a file that does not exist:
	// an existing file not read is refused before the arguments are validated).
	mustFail(t, call(t, ws, "edit", `{"path":"missing.txt","edits":[{"oldText":"","newText":"b"}]}`), "Validation failed", "/edits/0/oldText")
	mustFail(t, call(t, ws, "edit", `{"path":"missing.txt","edits":[]}`), "Validation failed", "/edits")
	mustFail(t, call(t, ws, "edit", `{"path":"missing.txt","edits":[{"oldText":"a","newText":"b","extra":1}]}`), "Validation failed")
}

func TestEditCRLFFile(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"})
	readThen(t, ws, "w.txt")
	mustOK(t, call(t, ws, "edit", `{"path":"w.txt","edits":[{"oldText":"one\ntwo","newText":"one\n2\nmore"}]}`))
	if got := readFile(t, filepath.Join(dir, "w.txt")); got != "one\r\n2\r\nmore\r\nthree\r\n" {
		t.Errorf("file holds %q", got)
	}
}

// R6: the older single-edit form is rewritten to edits[], through the real pipeline.
func TestEditLegacyForm(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"l.txt": "old line\n"})
	readThen(t, ws, "l.txt")
	r := call(t, ws, "edit", `{"path":"l.txt","oldText":"old","newText":"new"}`)
	mustOK(t, r)
	if got := readFile(t, filepath.Join(dir, "l.txt")); got != "new line\n" {
		t.Errorf("file holds %q", got)
	}
	// A legacy form missing newText is rewritten, then the schema says what is missing.
	mustFail(t, call(t, ws, "edit", `{"path":"l.txt","oldText":"new"}`), "/edits/0", "newText")
}

func TestPrepareEditArgs(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"path":"a","oldText":"x","newText":"y"}`, `{"edits":[{"newText":"y","oldText":"x"}],"path":"a"}`},
		{`{"path":"a","oldText":"x"}`, `{"edits":[{"oldText":"x"}],"path":"a"}`},
		// Other shapes pass through byte for byte.
		{`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`},
		{`{"path":"a","edits":[],"oldText":"x","newText":"y"}`, `{"path":"a","edits":[],"oldText":"x","newText":"y"}`},
		{`{"path":"a"}`, `{"path":"a"}`},
		{`[1,2]`, `[1,2]`},
		{`not json`, `not json`},
		{`null`, `null`},
	}
	for _, c := range cases {
		got, err := tools.PrepareEditArgs(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("PrepareEditArgs(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}
