// This file tests the parts of the commands that need no session: reading a template's
// front matter, filling in $ARGUMENTS, and finding the last prompt's checkpoint on a
// session file's branch (the daemon-level tests are rpc/commands_test.go and
// acp/commands_test.go).

package session

import (
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		name, text         string
		desc, hint, prompt string
	}{
		{"a", "---\r\ndescription: \"Quoted\"\r\nargument-hint: 'file'\r\n---\r\nDo $ARGUMENTS.\r\n", "Quoted", "file", "Do $ARGUMENTS."},
		{"b", "# Title line\n\nBody with $ARGUMENTS", "Title line", "arguments", "# Title line\n\nBody with $ARGUMENTS"},
		{"c", "---\ndescription: unterminated\nBody", "description: unterminated", "", "---\ndescription: unterminated\nBody"},
		{"d", "", "/d", "", ""},
		{"e", "---\ndescription: x: y\n---", "x: y", "", ""},
	} {
		c := parseCommand(tc.name, tc.text)
		hint := ""
		if c.Input != nil {
			hint = c.Input.Hint
		}
		if c.Description != tc.desc || hint != tc.hint || c.template != tc.prompt {
			t.Errorf("%s: description %q hint %q template %q; want %q %q %q", tc.name, c.Description, hint, c.template, tc.desc, tc.hint, tc.prompt)
		}
	}
}

func TestExpandTemplate(t *testing.T) {
	for _, tc := range []struct{ template, args, want string }{
		{"Fix #$ARGUMENTS, then test $ARGUMENTS.", "42", "Fix #42, then test 42."},
		{"Review.", "", "Review."},
		{"Review.", "the parser", "Review.\n\nthe parser"},
		{"Use $ARGUMENTS", "", "Use "},
	} {
		if got := expandTemplate(tc.template, tc.args); got != tc.want {
			t.Errorf("expandTemplate(%q, %q) = %q, want %q", tc.template, tc.args, got, tc.want)
		}
	}
}

func TestCommandNames(t *testing.T) {
	for name, ok := range map[string]bool{"help": true, "fix-issue_2": true, "..": false, "a/b": false, "a.b": false, "": false, "-x": false} {
		if commandNameRE.MatchString(name) != ok {
			t.Errorf("name %q valid: %v, want %v", name, !ok, ok)
		}
	}
}

func TestLastPromptCheckpoint(t *testing.T) {
	user := func(text string) store.Entry {
		m := llm.NewUser(text)
		return store.Entry{Kind: store.KindMessage, Message: &m}
	}
	mark := func(id, safety string) store.Entry {
		return store.Entry{Kind: store.KindCheckpoint, Checkpoint: &store.Checkpoint{ID: id, Prompt: "p " + id, Safety: safety}}
	}
	rewound := []store.Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two"), mark("c3", ""), {Kind: store.KindRewind}}
	for _, tc := range []struct {
		branch []store.Entry
		want   string
	}{
		{nil, ""},
		{[]store.Entry{mark("c1", ""), user("one"), mark("c2", ""), user("two")}, "c2"},
		// A rewind to c3 leaves its mark on the branch with no message after it.
		{rewound, "c2"},
		// A rewind's own checkpoint is no prompt's.
		{[]store.Entry{mark("c1", ""), user("one"), mark("s1", "c1"), user("after")}, "c1"},
	} {
		if id, _ := lastPromptCheckpoint(tc.branch); id != tc.want {
			t.Errorf("lastPromptCheckpoint = %q, want %q", id, tc.want)
		}
	}
}
