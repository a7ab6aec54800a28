package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// AppendString must produce a JSON string that decodes to the same text as encoding/json's
// encoding of it (which also turns invalid UTF-8 into U+FFFD).
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	got := AppendString(nil, s)
	var back string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("AppendString(%q) = %s: not valid JSON: %v", s, got, err)
	}
	ref, _ := json.Marshal(s)
	var want string
	json.Unmarshal(ref, &want)
	if back != want {
		t.Fatalf("AppendString(%q) decodes to %q, encoding/json's to %q", s, back, want)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "line\nbreak\r\ttab", "\x00\x01\x1f control",
		"<html> & stuff", "unicode é 漢字 🎉", "bad utf8 \xff\xfe end", "sep \u2028 \u2029", strings.Repeat("x", 1000)} {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("seed \n \" \\ \xff")
	f.Fuzz(func(t *testing.T, s string) { checkAppendString(t, s) })
}

// A message written by AppendJSON reads back equal, and matches what encoding/json makes
// of the same message nested in another value.
func TestAppendJSONNested(t *testing.T) {
	m := Message{Role: RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []Content{Text("a\"b")}, Details: map[string]any{"n": 1}, IsError: true, AddedToolNames: []string{"x"}, Timestamp: 5}
	direct, err := m.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := json.Marshal(struct{ M Message }{m})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"M":` + string(direct) + `}`; string(nested) != want {
		t.Fatalf("nested %s\nwant   %s", nested, want)
	}
	var back Message
	if err := json.Unmarshal(direct, &back); err != nil || back.ToolCallID != "c1" || back.Content[0].Text != "a\"b" || !back.IsError {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}
