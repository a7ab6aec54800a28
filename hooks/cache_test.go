package hooks

// Tests of what a session needs of its hooks besides running them: the set of now made again
// only when the settings changed, the workspace's hooks only once it is trusted; hooks/list's
// view; the project folder a hook is told; the audit line of a decision.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/redact"
)

func commands(s *Set) []string {
	var out []string
	for _, h := range s.All() {
		out = append(out, h.Source+":"+h.Command)
	}
	return out
}

func TestCacheCurrent(t *testing.T) {
	user := json.RawMessage(`{"Stop": [{"hooks": [{"type": "command", "command": "u"}]}]}`)
	ws := json.RawMessage(`{"Stop": [{"hooks": [{"type": "command", "command": "w"}]}]}`)
	own, err := Parse(json.RawMessage(`{"Stop": [{"hooks": [{"type": "command", "command": "o"}]}]}`), "session")
	if err != nil {
		t.Fatal(err)
	}
	var c Cache
	untrusted := c.Current(user, ws, false, own)
	if got := commands(untrusted); !slices.Equal(got, []string{"user:u", "session:o"}) {
		t.Errorf("untrusted folder: %q, want the user's and the session's hooks only", got)
	}
	if again := c.Current(user, ws, false, own); again != untrusted {
		t.Error("the same settings made the set again")
	}
	trusted := c.Current(user, ws, true, own)
	if got := commands(trusted); !slices.Equal(got, []string{"user:u", "workspace:w", "session:o"}) {
		t.Errorf("trusted folder: %q, want user, workspace, session in that order", got)
	}
	// A reload gives new slices, even with the same text: the set is made again from them.
	reloaded := json.RawMessage(`{"Stop": [{"hooks": [{"type": "command", "command": "u2"}]}]}`)
	if got := commands(c.Current(reloaded, ws, true, own)); !slices.Equal(got, []string{"user:u2", "workspace:w", "session:o"}) {
		t.Errorf("after a reload: %q", got)
	}
	if got := commands(c.Current(json.RawMessage(`{"Nope": []}`), nil, true, nil)); got != nil {
		t.Errorf("a source that does not parse added hooks: %q", got)
	}
}

func TestSameBytes(t *testing.T) {
	a := []byte(strings.Repeat("abc", 2))
	if !sameBytes(a, a) || !sameBytes(nil, []byte{}) {
		t.Error("the same slice, or two empty ones, are the same")
	}
	if sameBytes(a, append([]byte(nil), a...)) || sameBytes(a, a[:2]) || sameBytes(a[1:], a[:2]) {
		t.Error("equal bytes elsewhere, or another length, are not the same slice")
	}
}

func TestInfos(t *testing.T) {
	var none *Set
	if got := none.Infos(); got == nil || len(got) != 0 {
		t.Errorf("no hooks: %#v, want an empty list (hooks/list answers [])", got)
	}
	s, err := Parse(json.RawMessage(`{"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "a"}]}], "Stop": [{"hooks": [{"type": "command", "command": "b"}]}]}`), "user")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.Infos())
	want := `[{"event":"PreToolUse","matcher":"bash","command":"a","source":"user"},{"event":"Stop","command":"b","source":"user"}]`
	if string(got) != want {
		t.Errorf("Infos = %s\nwant    %s", got, want)
	}
}

func TestProjectDir(t *testing.T) {
	for _, c := range []struct {
		cwd   string
		roots []string
		want  string
	}{
		{"/w/a", nil, "/w/a"},
		{"/elsewhere", []string{"/w/a", "/w/b"}, "/w/a"},
		{"/w/b/sub", []string{"/w/a", "/w/b"}, "/w/b"},
		{"/w/b/x", []string{"/w/a", "/w/b/"}, "/w/b/"},
		{"/w/bc", []string{"/w/a", "/w/b"}, "/w/a"},
		{"/w/b/sub", []string{"/w", "/w/b"}, "/w/b"},
	} {
		if got := ProjectDir(c.cwd, c.roots); got != c.want {
			t.Errorf("ProjectDir(%q, %q) = %q, want %q", c.cwd, c.roots, got, c.want)
		}
	}
}

func TestAuditEntry(t *testing.T) {
	h := Hook{Event: PreToolUse, Command: "check.sh", Source: "workspace"}
	e := AuditEntry(h, "s1", "c1", "bash", "deny", "no rm", nil)
	if e.Session != "s1" || e.Tool != "bash" || e.ToolCallID != "c1" || e.Decision != "hook deny" || string(e.Args) != "{}" ||
		e.DecidedBy != `PreToolUse hook "check.sh" (workspace): no rm` {
		t.Errorf("entry: %+v", e)
	}
	e = AuditEntry(Hook{Event: Stop, Command: "s", Source: "user"}, "s1", "", "", "block", "", nil)
	if e.Tool != "(Stop)" || e.DecidedBy != `Stop hook "s" (user)` {
		t.Errorf("a decision about no call: %+v", e)
	}
	r := redact.NewRedactor(nil).WithKnown(map[string]string{"TOKEN": "hunter2hunter2"})
	e = AuditEntry(h, "s1", "c1", "bash", "deny", "the key hunter2hunter2 leaked", r)
	if strings.Contains(e.DecidedBy, "hunter2") || !strings.Contains(e.DecidedBy, "REDACTED") {
		t.Errorf("a secret in the reason reached the log: %q", e.DecidedBy)
	}
}
