// This file answers an MCP server's sampling/createMessage with the session's model, for a
// server whose config sets "sampling": true (package mcp declines the others, and converts
// the request and the answer).

package session

//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but stays in the protocol for at least a year; servers in use still ask for it

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/mcp"
)

// sample answers a server's sampling request with the model of the session whose tool
// call the request belongs to.
//
// Contract: mcp.Options.Sample.
func sample(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	s := sessionOf(ctx)
	if s == nil {
		return nil, fmt.Errorf("no session is calling the MCP server %s", server)
	}
	return s.sample(ctx, server, req)
}

// sample runs one sampling request of the MCP server named server on the session's model.
// Requests are answered one at a time per session (parallel tool calls may both sample).
//
// Contract: called from package mcp's handler for a server request made during one of the
// session's tool calls (ctx is linked to that call: an abort cancels the model call). It
// returns an error a person can read when the session has no model, the request holds
// something pid cannot send the model, or the model call fails.
func (s *Session) sample(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	// The session's model of the moment (SetModel may change it), kept for the request.
	model := s.currentModel()
	if model.Provider == nil {
		return nil, fmt.Errorf("the session has no usable model to sample with")
	}
	r, err := mcp.SamplingRequest(server, req)
	if err != nil {
		return nil, err
	}
	s.sampling.mu.Lock()
	defer s.sampling.mu.Unlock()
	s.host.log.Info("mcp sampling", "session", s.id, "server", server, "messages", len(r.Messages), "maxTokens", req.MaxTokens)
	return mcp.SamplingResult(model.Provider.Stream(ctx, r, nil), model.Name)
}
