// This file declares the wire shapes of pid's protocol (docs/protocol.md): request params and
// results, notification payloads, and the editor-side requests for approvals; and it holds
// decodeParams, the face's one decoding of request params.

package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// ProtocolVersion is the version of pid's own methods, reported by initialize.
const ProtocolVersion = "1"

type sessionNewResult struct {
	SessionID string             `json:"sessionId"`
	Tools     []session.ToolInfo `json:"tools"`
	Modes     session.Modes      `json:"modes"`
	// Instructions are the instruction files the model gets (absent: none).
	Instructions []session.InstructionFile `json:"instructions,omitempty"`
}

// setModeParams are session/setMode's params.
type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// modeUpdateParams are modeUpdate's params: the session's mode changed.
type modeUpdateParams struct {
	SessionID     string `json:"sessionId"`
	CurrentModeID string `json:"currentModeId"`
}

// sessionParams are the params of the methods that name a session only ({sessionId}).
type sessionParams struct {
	SessionID string `json:"sessionId"`
}

// promptParams are the params of session/prompt, session/steer and session/followUp: text,
// content blocks (in the Agent Client Protocol's shape), or both.
type promptParams struct {
	SessionID string            `json:"sessionId"`
	Text      *string           `json:"text"`
	Content   []json.RawMessage `json:"content"`
}

type setModelParams struct {
	SessionID string          `json:"sessionId"`
	Model     json.RawMessage `json:"model"`
}

// readTextFileParams and writeTextFileParams are the params of pid's fs/read_text_file and
// fs/write_text_file requests to the editor (the ACP shapes).
type readTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

type writeTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

type promptResult struct {
	StopReason llm.StopReason `json:"stopReason"`
	Messages   editorMessages `json:"messages"` // long tool-call arguments elided
	Terminated bool           `json:"terminated,omitempty"`
}

type toolsResult struct {
	Tools []session.ToolInfo `json:"tools"`
}

type executeParams struct {
	SessionID     string         `json:"sessionId"`
	ToolCalls     []llm.ToolCall `json:"toolCalls"`
	ToolExecution string         `json:"toolExecution,omitempty"`
}

type executeResult struct {
	Messages  []llm.Message `json:"messages"`
	Terminate bool          `json:"terminate"`
	Aborted   bool          `json:"aborted,omitempty"`
}

type folderParams struct {
	Folder string `json:"folder"`
}

type trustListResult struct {
	Folders []session.TrustedFolder `json:"folders"`
}

// trustRequest is workspace/requestTrust's params.
type trustRequest struct {
	Folder  string   `json:"folder"`
	Ignored []string `json:"ignored"`
}

// Answers to pid's requests to the editor (the requests are encoded in encode.go).
type (
	beforeAnswer struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
		// Mode is, for an answer allowing exit_plan_mode, the mode to switch to.
		Mode string `json:"mode,omitempty"`
	}
	trustAnswer struct {
		Trusted bool `json:"trusted"`
	}
	readTextFileAnswer struct {
		Content *string `json:"content"`
	}
	afterAnswer struct {
		Content   []llm.Content `json:"content"`
		Details   any           `json:"details"`
		IsError   *bool         `json:"isError"`
		Terminate *bool         `json:"terminate"`
	}
)

// noParams are the params of a method that takes none: decodeParams leaves them alone, so
// such a method answers whatever params the request has (none are read).
type noParams struct{}

// decodeParams is the native face's Decode (rpcconn.Face.Decode), its one decoding of
// request params: it decodes params into v, a pointer to the method's params type. Missing,
// null and [] params decode as {} (so all optional fields take their zero values); anything
// else that does not fit v is an invalid-params error naming the problem. A *noParams is
// left alone whatever params are.
func decodeParams(raw json.RawMessage, v any) error {
	if _, ok := v.(*noParams); ok {
		return nil
	}
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(b, &arr); err == nil && len(arr) == 0 {
			return nil
		}
		return invalidParams("params must be an object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return invalidParams("%s", describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		if te.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", te.Field, goTypeToJSON(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("params must be %s, not %s", goTypeToJSON(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func goTypeToJSON(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr", "interface":
		return "an object"
	case "int", "int64", "int32", "uint64", "float64":
		return "a number"
	}
	return kind
}
