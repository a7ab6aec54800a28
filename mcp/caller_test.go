package mcp

import (
	"context"
	"testing"
)

// A context made by WithCaller gives back its caller and call id, through a context derived
// from it too; a context without them gives nil and "".
func TestWithCaller(t *testing.T) {
	type session struct{ id string }
	s := &session{id: "s1"}
	ctx, cancel := context.WithCancel(WithCaller(t.Context(), s, "call-7"))
	defer cancel()
	if got, _ := Caller(ctx).(*session); got != s || CallID(ctx) != "call-7" {
		t.Errorf("Caller, CallID = %v, %q; want the session and call-7", Caller(ctx), CallID(ctx))
	}
	if Caller(t.Context()) != nil || CallID(t.Context()) != "" {
		t.Error("a context without a caller gave one")
	}
}
