// This file lends the native protocol's notifications to a client without a wire: pid exec
// (cmd/pid) prints each event of its run as the notification an editor would get.

package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/event"
)

// Notification returns the method and params of the notification the native protocol sends
// an editor for ev in session sessionID, exactly as Serve writes them (docs/protocol.md,
// "Notifications during a run"), and reports false for an event that is no notification of
// its own (a warning: the caller logs it, and the streaming steps an editor is not sent).
// Contract: safe for concurrent use; params is a new slice the caller may keep; an error
// means ev could not be encoded (a bug), and nothing is returned with it.
func Notification(sessionID string, ev event.Event) (method string, params json.RawMessage, ok bool, err error) {
	var p any
	switch e := ev.(type) {
	case event.PlanUpdate:
		entries := e.Entries
		if entries == nil {
			entries = []event.PlanEntry{}
		}
		method, p = "planUpdate", &planParams{SessionID: sessionID, Entries: entries}
	case event.UsageUpdate:
		method, p = "usageUpdate", &usageParams{SessionID: sessionID, Used: e.Used, Size: e.Size, Cost: e.Cost}
	case event.SubagentStart:
		method, p = "subagentStart", &subagentParams{SessionID: e.ParentSessionID, ToolCallID: e.ToolCallID, ChildSessionID: e.ChildSessionID,
			Description: e.Description, Agent: e.Agent}
	case event.SubagentEnd:
		method, p = "subagentEnd", &subagentParams{SessionID: e.ParentSessionID, ToolCallID: e.ToolCallID, ChildSessionID: e.ChildSessionID,
			StopReason: e.StopReason}
	}
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return "", nil, false, err
		}
		return method, b, true, nil
	}
	b, ok, err := encodeEvent(nil, sessionID, ev)
	if err != nil || !ok {
		return "", nil, false, err
	}
	var n struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return "", nil, false, fmt.Errorf("the notification for %T is not JSON: %v", ev, err)
	}
	return n.Method, n.Params, true, nil
}
