// Tests of Led (which calls are decided again where their path leads) and Stricter.

package gate

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
)

func TestLed(t *testing.T) {
	// The workspace /w holds docs/x.md -> ../.envrc, and docs/same.md, a link whose target
	// is itself as written (Leads reports a place that is no other).
	leads := func(p string) (string, string, bool) {
		switch p {
		case "docs/x.md", "/w/docs/x.md":
			return "/w", ".envrc", true
		case "docs/same.md":
			return "/w", "docs/same.md", true
		}
		return "", "", false
	}
	call := func(name, args string) llm.ToolCall {
		return llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)}
	}
	cases := []struct {
		call     llm.ToolCall
		wantPath string // "" when the call is not led
		wantRel  string
	}{
		{call("read", `{"path":"docs/x.md","offset":3}`), "/w/.envrc", ".envrc"},
		{call("edit", `{"path":"/w/docs/x.md","old":"a"}`), "/w/.envrc", ".envrc"},
		{call("ls", `{"path":"docs/x.md"}`), "/w/.envrc", ".envrc"},
		{call("bash", `{"path":"docs/x.md"}`), "", ""},          // not a file tool
		{call("read", `{"path":"docs/y.md"}`), "", ""},          // no link
		{call("read", `{"path":"docs/same.md"}`), "", ""},       // leads where it is
		{call("read", `{"path":""}`), "", ""},                   // no path
		{call("read", `{"path":7}`), "", ""},                    // not a string
		{call("read", `not json`), "", ""},                      // not an object
		{call("mcp__fs__read", `{"path":"docs/x.md"}`), "", ""}, // another tool
	}
	for _, tc := range cases {
		out, rel, ok := Led(tc.call, "/w", leads)
		if ok != (tc.wantPath != "") || rel != tc.wantRel {
			t.Errorf("Led(%s %s) = %s, %q, %v; want led to %q", tc.call.Name, tc.call.Arguments, out.Arguments, rel, ok, tc.wantPath)
			continue
		}
		if !ok {
			if string(out.Arguments) != string(tc.call.Arguments) {
				t.Errorf("Led(%s %s) changed the call to %s", tc.call.Name, tc.call.Arguments, out.Arguments)
			}
			continue
		}
		var args map[string]any
		if err := json.Unmarshal(out.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		if args["path"] != tc.wantPath || out.ID != "c1" || out.Name != tc.call.Name {
			t.Errorf("Led(%s %s) = %+v; want the same call on %s", tc.call.Name, tc.call.Arguments, out, tc.wantPath)
		}
		if _, kept := args["offset"]; string(tc.call.Arguments) == `{"path":"docs/x.md","offset":3}` && !kept {
			t.Errorf("Led dropped the other arguments: %s", out.Arguments)
		}
	}
}

func TestStricter(t *testing.T) {
	allow := permissions.Verdict{Decision: permissions.Allow, Source: "project"}
	ask := permissions.Verdict{Decision: permissions.Ask, Source: "built-in"}
	deny := permissions.Verdict{Decision: permissions.Deny, Source: "user"}
	cases := []struct {
		v, led, want permissions.Verdict
	}{
		{allow, ask, permissions.Verdict{Decision: permissions.Ask, Source: "built-in", Part: "through a link to .envrc"}},
		{allow, deny, permissions.Verdict{Decision: permissions.Deny, Source: "user", Part: "through a link to .envrc"}},
		{ask, deny, permissions.Verdict{Decision: permissions.Deny, Source: "user", Part: "through a link to .envrc"}},
		{ask, allow, ask},
		{deny, ask, deny},
		{allow, allow, allow},
		{ask, ask, ask},
	}
	for _, tc := range cases {
		if got := Stricter(tc.v, tc.led, ".envrc"); got.Decision != tc.want.Decision || got.Source != tc.want.Source || got.Part != tc.want.Part {
			t.Errorf("Stricter(%s, %s) = %+v, want %+v", tc.v.Decision, tc.led.Decision, got, tc.want)
		}
	}
}

// Verdict decides a built-in file tool's call again where its link leads, and the stricter
// verdict wins; another tool's call, or one that leads nowhere else, is decided once.
func TestVerdict(t *testing.T) {
	leads := func(p string) (string, string, bool) {
		if p == "docs/x.md" {
			return "/w", ".envrc", true
		}
		return "", "", false
	}
	var decided []string
	on := func(c llm.ToolCall) permissions.Verdict {
		var a struct{ Path string }
		_ = json.Unmarshal(c.Arguments, &a)
		decided = append(decided, a.Path)
		if a.Path == "/w/.envrc" {
			return permissions.Verdict{Decision: permissions.Deny, Source: "user"}
		}
		return permissions.Verdict{Decision: permissions.Allow, Source: "project"}
	}
	read := llm.ToolCall{Name: "read", Arguments: json.RawMessage(`{"path":"docs/x.md"}`)}
	v := Verdict(read, true, "/w", leads, on)
	if v.Decision != permissions.Deny || v.Part != "through a link to .envrc" || len(decided) != 2 || decided[1] != "/w/.envrc" {
		t.Errorf("a read through a link: %+v, decided on %q", v, decided)
	}
	decided = nil
	if v := Verdict(read, false, "/w", leads, on); v.Decision != permissions.Allow || len(decided) != 1 {
		t.Errorf("a scripted read: %+v, decided on %q", v, decided)
	}
	decided = nil
	plain := llm.ToolCall{Name: "read", Arguments: json.RawMessage(`{"path":"docs/y.md"}`)}
	if v := Verdict(plain, true, "/w", leads, on); v.Decision != permissions.Allow || len(decided) != 1 {
		t.Errorf("a read of a plain file: %+v, decided on %q", v, decided)
	}
}
