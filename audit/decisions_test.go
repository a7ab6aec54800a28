// Tests of Decisions (kept until read once, or forgotten) and Refused (a refused call's entry,
// sanitized as the hook's are).

package audit_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/redact"
)

func TestDecisions(t *testing.T) {
	var d audit.Decisions
	d.Note("c1", "allow", "user")
	d.Note("c2", "allow", "mode auto")
	d.Note("c2", "allow", "PreToolUse hook") // a later decision replaces
	if dec, by, ok := d.Take("c1"); !ok || dec != "allow" || by != "user" {
		t.Errorf("Take(c1) = %q, %q, %v", dec, by, ok)
	}
	if _, _, ok := d.Take("c1"); ok {
		t.Error("c1 was read twice")
	}
	if _, by, _ := d.Take("c2"); by != "PreToolUse hook" {
		t.Errorf("c2 was decided by %q", by)
	}
	d.Note("c3", "allow", "user")
	d.Forget("c3")
	if _, _, ok := d.Take("c3"); ok {
		t.Error("c3 was kept after Forget")
	}
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b", "c", "d"} {
		wg.Go(func() { d.Note(id, "allow", "by "+id) })
	}
	wg.Wait()
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, by, ok := d.Take(id); !ok || by != "by "+id {
			t.Errorf("Take(%s) = %q, %v", id, by, ok)
		}
	}
}

func TestRefused(t *testing.T) {
	token := "ghp_" + strings.Repeat("Z9y8", 9)
	args, _ := json.Marshal(map[string]string{"command": "export GITHUB_TOKEN=" + token})
	call := llm.ToolCall{ID: "c1", Name: "bash", Arguments: args}
	e := audit.Refused("s1", call, "deny", "session (export GITHUB_TOKEN="+token+")", redact.NewRedactor(nil))
	if e.Session != "s1" || e.Tool != "bash" || e.ToolCallID != "c1" || !e.IsError || e.Decision != "deny" {
		t.Errorf("the entry is %+v", e)
	}
	if e.DecidedBy != "session (export GITHUB_TOKEN=[REDACTED:github-token])" {
		t.Errorf("decidedBy %q", e.DecidedBy)
	}
	if strings.Contains(string(e.Args), token) || !strings.Contains(string(e.Args), "REDACTED") {
		t.Errorf("args %s", e.Args)
	}
	long := strings.Repeat("x", 5000)
	e = audit.Refused("s1", call, "aborted", long, nil)
	if len(e.DecidedBy) >= 5000 || e.Decision != "aborted" || string(e.Args) != string(args) {
		t.Errorf("without a redactor: decidedBy of %d bytes, args %s", len(e.DecidedBy), e.Args)
	}
}
