// Package permtest builds what tests of the permission policy need: a Spec from a JSON
// literal (Spec), a Call (Call) and a one-argument arguments object (ArgsJSON). Package
// permissions' tests and package settings' use it.
package permtest

import (
	"encoding/json"
	"testing"

	"github.com/pid-agent/pid/permissions"
)

// Spec parses a permissions object, or fails the test.
func Spec(t testing.TB, s string) *permissions.Spec {
	t.Helper()
	p, err := permissions.ParseSpec([]byte(s))
	if err != nil {
		t.Fatalf("ParseSpec(%s): %v", s, err)
	}
	return p
}

// Call builds a Call from a tool's name and a JSON arguments literal.
func Call(tool, args string) permissions.Call {
	return permissions.Call{Tool: tool, Args: json.RawMessage(args)}
}

// ArgsJSON encodes one string argument as an arguments object, {key: value}.
func ArgsJSON(key, value string) string {
	b, _ := json.Marshal(map[string]string{key: value})
	return string(b)
}
