package title

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  go test ./...  ", 80, "go test ./..."},
		{"first\nsecond", 80, "first…"},
		{"abcdef", 3, "abc…"},
		{"ab c", 3, "ab…"},
		{"日本語テキスト", 3, "日本語…"},
		{"", 5, ""},
	} {
		if got := Line(tc.in, tc.max); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestCode(t *testing.T) {
	if got := Code("ls -l"); got != "`ls -l`" {
		t.Errorf("Code = %q", got)
	}
	if got := Code("echo `date`"); got != "`` echo `date` ``" {
		t.Errorf("Code with a backtick = %q", got)
	}
	if Or("", "a file") != "a file" || Or("x", "a file") != "x" {
		t.Error("Or")
	}
}

// A subagent's steps: a call by its first telling argument, a result by its size or its
// error.
func TestArgsAndResult(t *testing.T) {
	if got := Args(json.RawMessage(`{"offset":3,"path":"a.go\nmore"}`)); got != `"a.go"` {
		t.Errorf("Args = %s", got)
	}
	if Args(json.RawMessage(`{"n":1}`)) != "" || Args(json.RawMessage(`x`)) != "" {
		t.Error("Args without a string argument")
	}
	if got := Result([]llm.Content{llm.Text("one\ntwo\n")}, false); got != "2 lines" {
		t.Errorf("Result = %q", got)
	}
	if got := Result([]llm.Content{llm.Text("no such file\nat line 2")}, true); got != "error: no such file" {
		t.Errorf("error Result = %q", got)
	}
}
