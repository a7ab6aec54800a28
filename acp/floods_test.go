package acp

// A tool call with megabytes of arguments reaches the client with its rawInput elided past
// elide.MaxArgs: the short members kept, "$elided" saying what was left out (issue 19).

import (
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/elide"
)

func TestLongRawInputIsElided(t *testing.T) {
	c := start(t)
	c.initialize(nil)
	junk := `"` + strings.Repeat("x", elide.MaxArgs*4) + `"`
	args := `{"path":"a.txt","junk":` + junk + `}`
	sid := c.newSession(t.TempDir(), script("", toolTurn(call("c1", "read", args)), textTurn("done")))
	_, before := c.result(c.prompt(sid, "go"), nil)
	seen := false
	for _, u := range updates(t, sid, before) {
		if u.Get("sessionUpdate").String() != "tool_call" {
			continue
		}
		seen = true
		in := u.Get("rawInput")
		if len(in.Raw) > 2<<10 || in.Get("path").String() != "a.txt" || in.Get(`\$elided.bytes`).Int() != int64(len(args)) || in.Get(`\$elided.omitted.0`).String() != "junk" {
			t.Errorf("tool_call rawInput %.300s (%d bytes), want the path kept and the junk of %d bytes elided", in.Raw, len(in.Raw), len(args))
		}
	}
	if !seen {
		t.Fatal("no tool_call update")
	}
}
