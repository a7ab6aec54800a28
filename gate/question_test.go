// Tests of ScopeOf (what an "always" answer covers) and Remember (kept exactly that narrow:
// in the store, else in the session's memory, else for this call only, the face told).

package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
)

func TestScopeOf(t *testing.T) {
	cases := []struct {
		name, args string
		builtin    bool
		want       *Scope // nil: no scope
	}{
		{"bash", `{"command":"npm test -- -x"}`, true, &Scope{Tool: "bash", Pattern: "npm test", Description: "bash commands starting with `npm test` in this workspace"}},
		{"write", `{"path":"/w/src/a.go","content":"x"}`, true, &Scope{Tool: "write", Pattern: "src/a.go", Description: "write calls on the path `src/a.go` in this workspace"}},
		{"bash", `{"command":"echo $(id)"}`, true, nil},
		// A tool that is not the built-in one is scoped whole, whatever its name.
		{"bash", `{"command":"echo $(id)"}`, false, &Scope{Tool: "bash", Description: "every call of the tool bash in this workspace"}},
		{"mcp__db__query", `{"sql":"select 1"}`, false, &Scope{Tool: "mcp__db__query", Description: "every call of the tool mcp__db__query in this workspace"}},
	}
	for _, tc := range cases {
		got := ScopeOf(llm.ToolCall{Name: tc.name, Arguments: []byte(tc.args)}, tc.builtin, "/w")
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("ScopeOf(%s %s, builtin %v) = %+v, want %+v", tc.name, tc.args, tc.builtin, got, tc.want)
		}
	}
}

func TestRemember(t *testing.T) {
	root := t.TempDir()
	npm := llm.ToolCall{ID: "c1", Name: "bash", Arguments: []byte(`{"command":"npm test"}`)}
	other := permissions.Call{Tool: "bash", Args: []byte(`{"command":"npm publish"}`), Cwd: root}
	same := permissions.Call{Tool: "bash", Args: []byte(`{"command":"npm test -- -x"}`), Cwd: root}
	q := Question{Call: npm, Always: ScopeOf(npm, true, root)}
	openStore := func(t *testing.T) *permissions.Store {
		st, err := permissions.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	t.Run("in the store", func(t *testing.T) {
		st, memory := openStore(t), permissions.NewMemoryStore()
		if warn := Remember(q, permissions.Allow, root, st, memory); warn != nil {
			t.Errorf("warnings %q", warn)
		}
		if r, ok := st.Lookup(root, same); !ok || r.Decision != permissions.Allow || r.Pattern != "npm test" {
			t.Errorf("the store has %+v, %v for the same command", r, ok)
		}
		if _, ok := st.Lookup(root, other); ok {
			t.Error("the answer covers another command: kept wider than shown")
		}
		if _, ok := memory.Lookup(root, same); ok {
			t.Error("the answer was kept in memory too")
		}
	})
	t.Run("in memory when the store cannot keep it", func(t *testing.T) {
		st, memory := openStore(t), permissions.NewMemoryStore()
		if err := os.MkdirAll(filepath.Join(st.Path(), "x"), 0o755); err != nil { // a folder where its file goes
			t.Fatal(err)
		}
		warn := Remember(q, permissions.Deny, root, st, memory)
		if len(warn) != 1 || !strings.HasPrefix(warn[0], "could not store the answer for c1 (bash commands starting with `npm test` in this workspace), kept for this session only: ") {
			t.Errorf("warnings %q", warn)
		}
		if r, ok := memory.Lookup(root, same); !ok || r.Decision != permissions.Deny {
			t.Errorf("memory has %+v, %v", r, ok)
		}
		if _, ok := memory.Lookup(root, other); ok {
			t.Error("the answer covers another command")
		}
	})
	t.Run("in memory without a store", func(t *testing.T) {
		memory := permissions.NewMemoryStore()
		if warn := Remember(q, permissions.Allow, root, nil, memory); warn != nil {
			t.Errorf("warnings %q", warn)
		}
		if _, ok := memory.Lookup(root, same); !ok {
			t.Error("memory does not have it")
		}
	})
	t.Run("for this call only", func(t *testing.T) {
		st, memory := openStore(t), permissions.NewMemoryStore()
		warn := Remember(Question{Call: npm}, permissions.Allow, root, st, memory)
		if len(warn) != 1 || warn[0] != `the answer for c1 applied to this call only: no "always" scope as narrow as the call could be given` {
			t.Errorf("warnings %q", warn)
		}
		// A scope neither can keep (the folder is not absolute): the face hears both.
		warn = Remember(q, permissions.Allow, "rel", st, memory)
		if len(warn) != 2 || !strings.HasPrefix(warn[1], "the answer for c1 applied to this call only: ") {
			t.Errorf("warnings %q", warn)
		}
		if l, _ := st.List(); len(l.Permissions) != 0 {
			t.Errorf("the store kept %+v", l.Permissions)
		}
		if _, ok := memory.Lookup(root, same); ok {
			t.Error("memory kept it")
		}
	})
}
