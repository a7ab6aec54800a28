// This file tests Claims: a file changed by one running child is refused to another until
// the first ends, and Conflict's refusal names the task that has it.

package task

import (
	"strings"
	"testing"
)

func TestClaims(t *testing.T) {
	type child struct{ name string }
	a, b := &child{"a"}, &child{"b"}
	var c Claims[*child]
	if other, taken := c.Claim("/w/x.go", a); taken || other != nil {
		t.Fatalf("first claim: %v, %v", other, taken)
	}
	if _, taken := c.Claim("/w/x.go", a); taken {
		t.Error("a child's second change of its own file refused")
	}
	if other, taken := c.Claim("/w/x.go", b); !taken || other != a {
		t.Errorf("b's claim of a's file = %v, %v; want a, true", other, taken)
	}
	if _, taken := c.Claim("/w/y.go", b); taken {
		t.Error("b's claim of a free file refused")
	}
	c.Release(a)
	if _, taken := c.Claim("/w/x.go", b); taken {
		t.Error("a's file still refused after a ended")
	}
	if other, taken := c.Claim("/w/y.go", a); !taken || other != b {
		t.Errorf("Release(a) forgot b's file: %v, %v", other, taken)
	}
}

func TestConflict(t *testing.T) {
	msg := Conflict("/w/x.go", "fix the parser", "call-7", "s-2").Error()
	for _, want := range []string{"/w/x.go is being changed", `the task "fix the parser"`, "call call-7", "session s-2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Conflict = %q, want it to say %q", msg, want)
		}
	}
}
