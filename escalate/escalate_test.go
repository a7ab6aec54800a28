// This file tests what a bash call's arguments request, the command an "always" answer
// covers, and the memory of the answers.

package escalate

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/permissions"
)

func TestOf(t *testing.T) {
	if r := Of(json.RawMessage(`{"command":"make","unsandboxed":true,"justification":"needs the network"}`)); r == nil || *r != (Request{Escalation: true, Justification: "needs the network"}) {
		t.Errorf("an unsandboxed call: %+v", r)
	}
	for _, args := range []string{`{"command":"make"}`, `{"command":"make","unsandboxed":false}`, `not json`} {
		if r := Of(json.RawMessage(args)); r != nil {
			t.Errorf("Of(%s) = %+v, want none", args, r)
		}
	}
	b, _ := json.Marshal(Request{Escalation: true, Justification: "j"})
	if string(b) != `{"escalation":true,"justification":"j"}` {
		t.Errorf("JSON %s", b)
	}
}

func TestCommand(t *testing.T) {
	if cmd, ok := Command(json.RawMessage(`{"command":"  touch ../x \n"}`)); !ok || cmd != "touch ../x" {
		t.Errorf("Command = %q, %v", cmd, ok)
	}
	for _, args := range []string{`{"command":"   "}`, `{}`, `[]`} {
		if _, ok := Command(json.RawMessage(args)); ok {
			t.Errorf("Command(%s) found one", args)
		}
	}
	if d := Describe("make"); d != "exactly the bash command `make`, run outside the sandbox, for this session" {
		t.Errorf("Describe = %q", d)
	}
}

// An answer is kept for its folder and exact command only, and the last one wins.
func TestMemory(t *testing.T) {
	var m Memory
	if _, ok := m.Recall("/ws", "make"); ok {
		t.Fatal("an empty memory recalled an answer")
	}
	m.Remember("/ws", "make", permissions.Allow)
	if d, ok := m.Recall("/ws", "make"); !ok || d != permissions.Allow {
		t.Errorf("Recall = %v, %v", d, ok)
	}
	for _, k := range [][2]string{{"/other", "make"}, {"/ws", "make install"}} {
		if _, ok := m.Recall(k[0], k[1]); ok {
			t.Errorf("%v recalled the answer to /ws make", k)
		}
	}
	m.Remember("/ws", "make", permissions.Deny)
	if d, _ := m.Recall("/ws", "make"); d != permissions.Deny {
		t.Errorf("the later answer did not win: %v", d)
	}
}
