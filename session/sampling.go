// This file answers an MCP server's sampling/createMessage with the session's model, for a
// server whose config sets "sampling": true (package mcp declines the others): the server's
// messages and system prompt go to the model without tools, and its text comes back.

package session

//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but stays in the protocol for at least a year; servers in use still ask for it

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/llm"
)

// maxSampleBytes bounds the text of one sampling request: a server may not make pid send
// the model more than this.
const maxSampleBytes = 1 << 20

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
	if model.provider == nil {
		return nil, fmt.Errorf("the session has no usable model to sample with")
	}
	msgs, err := samplingMessages(req)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %v", server, err)
	}
	s.sampling.mu.Lock()
	defer s.sampling.mu.Unlock()
	s.host.log.Info("mcp sampling", "session", s.id, "server", server, "messages", len(msgs), "maxTokens", req.MaxTokens)
	answer := model.provider.Stream(ctx, &llm.Request{SystemPrompt: req.SystemPrompt, Messages: msgs}, nil)
	switch answer.StopReason {
	case llm.StopError:
		return nil, fmt.Errorf("the model failed: %s", answer.ErrorMessage)
	case llm.StopAborted:
		return nil, fmt.Errorf("the tool call that asked was cancelled")
	}
	text := answer.Text()
	if text == "" {
		return nil, fmt.Errorf("the model gave no text")
	}
	stop := "endTurn"
	if answer.StopReason == llm.StopLength {
		stop = "maxTokens"
	}
	return &sdk.CreateMessageResult{Role: "assistant", Content: &sdk.TextContent{Text: text}, Model: model.name, StopReason: stop}, nil
}

// samplingMessages converts a sampling request's messages: text and images of the user and
// assistant roles. Audio and tool blocks have no place in pid's model calls.
func samplingMessages(req *sdk.CreateMessageParams) ([]llm.Message, error) {
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("the sampling request has no messages")
	}
	size := len(req.SystemPrompt)
	out := make([]llm.Message, 0, len(req.Messages))
	for i, m := range req.Messages {
		var c llm.Content
		switch v := m.Content.(type) {
		case *sdk.TextContent:
			c, size = llm.Text(v.Text), size+len(v.Text)
		case *sdk.ImageContent:
			c = llm.Content{Type: llm.ContentImage, MimeType: v.MIMEType, Data: base64.StdEncoding.EncodeToString(v.Data)}
			size += len(c.Data)
		default:
			return nil, fmt.Errorf("message %d: pid sends the model only text and images, not %T", i, m.Content)
		}
		if size > maxSampleBytes {
			return nil, fmt.Errorf("the sampling request is larger than %d bytes", maxSampleBytes)
		}
		role := llm.RoleUser
		switch strings.ToLower(string(m.Role)) {
		case "user":
		case "assistant":
			role = llm.RoleAssistant
			if c.Type != llm.ContentText {
				return nil, fmt.Errorf("message %d: an assistant message holds text only", i)
			}
		default:
			return nil, fmt.Errorf("message %d: role %q is neither user nor assistant", i, m.Role)
		}
		out = append(out, llm.Message{Role: role, Content: []llm.Content{c}, StopReason: stopFor(role), Timestamp: llm.Now()})
	}
	return out, nil
}

// stopFor is the stop reason a replayed message of role has: assistant messages ended.
func stopFor(role llm.Role) llm.StopReason {
	if role == llm.RoleAssistant {
		return llm.StopEnd
	}
	return ""
}
