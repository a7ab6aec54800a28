package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/provider/internal/wire"
)

func TestCloseJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, ``},
		{`   `, ``},
		{`"a string"`, ``},
		{`{`, `{}`},
		{` {`, ` {}`},
		{`{"pa`, `{}`},
		{`{"path"`, `{}`},
		{`{"path":`, `{}`},
		{`{"path": "a.`, `{"path": "a."}`},
		{`{"path": "a.txt"`, `{"path": "a.txt"}`},
		{`{"path": "a.txt",`, `{"path": "a.txt"}`},
		{`{"path": "a.txt", "n`, `{"path": "a.txt"}`},
		{`{"path": "a.txt", "n": 1`, `{"path": "a.txt"}`},
		{`{"path": "a.txt", "n": 12,`, `{"path": "a.txt", "n": 12}`},
		{`{"ok": tr`, `{}`},
		{`{"ok": true}`, `{"ok": true}`},
		{`{"a": [1, 2`, `{"a": [1]}`},
		{`{"a": [1, 2, "x`, `{"a": [1, 2, "x"]}`},
		{`{"a": {"b": {"c": "d`, `{"a": {"b": {"c": "d"}}}`},
		{`{"s": "line\`, `{"s": "line"}`},
		{`{"s": "q\"uote`, `{"s": "q\"uote"}`},
		{`{"s": "\u00e`, `{"s": ""}`},
		{`{"s": "é\u00e9x`, `{"s": "é\u00e9x"}`},
		{`{"s": "a}b]c`, `{"s": "a}b]c"}`},
		{`[`, `[]`},
		{`{"a": 1}}`, ``},
	} {
		got := wire.CloseJSON([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("CloseJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got != nil && !json.Valid(got) {
			t.Errorf("CloseJSON(%q) = %q is not valid JSON", tc.in, got)
		}
	}
}

// Every prefix of a real argument object closes into valid JSON or nothing, never into
// something invalid, and the whole object comes back as it is.
func TestCloseJSONEveryPrefix(t *testing.T) {
	full := `{"path": "src/a b.go", "edits": [{"old": "x := \"q\\n\"", "new": "y\u00e9"}, {"n": -1.5e3, "ok": false, "z": null}], "e": {}}`
	for i := 0; i <= len(full); i++ {
		got := wire.CloseJSON([]byte(full[:i]))
		if got != nil && !json.Valid(got) {
			t.Fatalf("prefix %q closed into invalid %q", full[:i], got)
		}
	}
	if got := wire.CloseJSON([]byte(full)); string(got) != full {
		t.Errorf("the whole object came back as %q", got)
	}
}

func TestFinalArgs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{"  \n", `{}`},
		{`{"a":1}`, `{"a":1}`},
		{" {\"a\":1}\n", `{"a":1}`},
		{`{"a":`, `"{\"a\":"`},
		{`not json`, `"not json"`},
	} {
		got := wire.FinalArgs([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("FinalArgs(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
