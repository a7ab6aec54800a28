// This file holds Elicitation, an MCP server's question (elicitation/create) as a face asks
// it, and ElicitAnswer, the person's answer, with their translations from and to the SDK's
// shapes, and Ask, one question's round through a face.

package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation is an MCP server's question (elicitation/create) to the person, as the face
// asks it.
type Elicitation struct {
	// Server is the MCP server that asks; ToolCallID the call it asks during, as the model
	// wrote it ("" when pid cannot tell).
	Server, ToolCallID string
	// Mode is "form" (a question answered with fields), "url" (a page to visit), or
	// another mode a newer server names.
	Mode    string
	Message string
	// RequestedSchema is, in form mode, the JSON Schema of the answer's fields; nil when
	// the server sent none.
	RequestedSchema json.RawMessage
	// URL and ElicitationID are url mode's.
	URL, ElicitationID string
	// Params are the request's params as the server sent them (MCP's ElicitRequest params),
	// for a face that passes the question on whole.
	Params json.RawMessage
}

// ElicitAnswer is the person's answer to an Elicitation: Action "accept" (with Content, the
// fields), "decline" or "cancel"; Meta is passed back to the server as the answer's _meta.
type ElicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

// Question returns server's request req, made during the tool call callID, as the face asks
// it: a request without a mode is "url" when it names a URL or an elicitation id, else
// "form"; a schema that is JSON null is none. The error says what could not be encoded.
//
// Contract: pure; req is not nil.
func Question(server, callID string, req *sdk.ElicitParams) (Elicitation, error) {
	q := Elicitation{Server: server, ToolCallID: callID, Mode: req.Mode, Message: req.Message, URL: req.URL, ElicitationID: req.ElicitationID}
	if q.Mode == "" {
		q.Mode = "form"
		if req.URL != "" || req.ElicitationID != "" {
			q.Mode = "url"
		}
	}
	var err error
	if q.Params, err = json.Marshal(req); err != nil {
		return Elicitation{}, err
	}
	if req.RequestedSchema != nil {
		b, err := json.Marshal(req.RequestedSchema)
		if err != nil {
			return Elicitation{}, fmt.Errorf("the requestedSchema of MCP server %s cannot be encoded: %v", server, err)
		}
		if string(b) != "null" {
			q.RequestedSchema = b
		}
	}
	return q, nil
}

// Ask puts server's request req, made during the tool call callID, to the person through
// ask (Question), and returns their answer as the server gets it; a nil request is declined
// without asking. The error is Question's or ask's.
func Ask(ctx context.Context, server, callID string, req *sdk.ElicitParams, ask func(context.Context, Elicitation) (ElicitAnswer, error)) (*sdk.ElicitResult, error) {
	if req == nil {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	q, err := Question(server, callID, req)
	if err != nil {
		return nil, err
	}
	a, err := ask(ctx, q)
	if err != nil {
		return nil, err
	}
	return a.Result(), nil
}

// Result returns the answer as the server gets it.
func (a ElicitAnswer) Result() *sdk.ElicitResult {
	return &sdk.ElicitResult{Meta: a.Meta, Action: a.Action, Content: a.Content}
}
