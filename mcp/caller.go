// This file carries who made a tool call into the context of an MCP server's requests made
// during it (elicitation, sampling): the caller (a session) and the call's id, as the model
// wrote it. A Catalog's callContext puts them there (WithCaller); Options.Elicit and
// Options.Sample read them (Caller, CallID).

package mcp

import "context"

// callerKey and callIDKey find the caller and the tool call's id in a context.
type (
	callerKey struct{}
	callIDKey struct{}
)

// WithCaller returns ctx carrying caller and callID, the id of the tool call being made.
//
// Contract: pure; any goroutine.
func WithCaller(ctx context.Context, caller any, callID string) context.Context {
	return context.WithValue(context.WithValue(ctx, callerKey{}, caller), callIDKey{}, callID)
}

// Caller returns the caller ctx carries (WithCaller); nil when none.
//
// Contract: pure; any goroutine.
func Caller(ctx context.Context) any { return ctx.Value(callerKey{}) }

// CallID returns the tool call's id ctx carries (WithCaller); "" when none.
//
// Contract: pure; any goroutine.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
