// This file turns an MCP server's sampling/createMessage (for a server whose config sets
// "sampling": true: the Manager declines the others) into a request to a session's model, and
// the model's answer back into the server's result: the server's messages and system prompt
// go to the model without tools, and its text comes back.

package mcp

//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but stays in the protocol for at least a year; servers in use still ask for it

import (
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/llm"
)

// maxSampleBytes bounds the text of one sampling request: a server may not make pid send
// the model more than this.
const maxSampleBytes = 1 << 20

// SamplingRequest returns the model request of server's sampling request: its system
// prompt, and its messages (text and images of the user and assistant roles; audio and tool
// blocks have no place in pid's model calls), at most 1 MiB of them. The error, for a request
// pid cannot send, names the server. Pure.
func SamplingRequest(server string, req *sdk.CreateMessageParams) (*llm.Request, error) {
	msgs, err := samplingMessages(req)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %v", server, err)
	}
	return &llm.Request{SystemPrompt: req.SystemPrompt, Messages: msgs}, nil
}

// SamplingResult returns the server's result of a sampling request the model named model
// answered with answer; an error a person can read when the model failed, was cancelled or
// gave no text. Pure.
func SamplingResult(answer llm.Message, model string) (*sdk.CreateMessageResult, error) {
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
	return &sdk.CreateMessageResult{Role: "assistant", Content: &sdk.TextContent{Text: text}, Model: model, StopReason: stop}, nil
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
