// This file replays a saved conversation for session/load: each item of the session, in
// order, becomes the session/update notifications a client would have received had it
// watched the conversation happen.

package acp

import (
	"fmt"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// compactionUpdate is the compaction_update update (sent only to a client that declared
// session.compaction).
type compactionUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CompactionID  string `json:"compactionId"`
	Status        string `json:"status"`
	Summary       []any  `json:"summary,omitempty"`
	Error         string `json:"error,omitempty"`
	// Meta is _meta.pid.kept: what the compaction kept word for word (plan.go).
	Meta any `json:"_meta,omitempty"`
}

// replay writes the updates of a session's items (see replayUpdates). Contract: st.mu is
// held, and no turn of the session is open.
func (st *sessionState) replay(items []session.Item) {
	st.srv.mu.Lock()
	compaction := st.srv.caps.Compaction
	st.srv.mu.Unlock()
	st.srv.replayUpdates(st.ss, items, compaction, st.update)
}

// replayUpdates passes to emit, in order, the updates that show items:
//
//   - a user message: a user_message_chunk per text or image block;
//   - an assistant message: an agent_thought_chunk per thinking block, an
//     agent_message_chunk per text block and a tool_call (pending, with the title, kind,
//     rawInput and locations of a live one) per tool call, in the message's order;
//   - a tool result: its call's final tool_call_update (completed or failed, content,
//     rawOutput, a diff for write and edit), as a live turn ends it;
//   - a compaction: a compaction_update {status: "completed", summary} when compaction is
//     set (the client declared session.compaction), else nothing: the messages it
//     summarized are replayed in full, since the session keeps them.
//
// Every tool_call is followed by its final tool_call_update: a call the transcript has no
// result for (there should be none: the layer gives interrupted calls one) is reported
// failed at the end, and a result whose call was not seen gets its tool_call first.
// Empty text and thinking blocks are left out, as a live turn sends no empty chunk; an
// assistant message's error text is not replayed (live, it was the prompt's error answer).
func (s *server) replayUpdates(cs callSite, items []session.Item, compaction bool, emit func(any)) {
	open := map[string]*callState{} // calls without their final update yet
	var order []string              // their ids, in the order they were seen
	compactions := 0
	for _, it := range items {
		if c := it.Compaction; c != nil {
			compactions++
			if compaction {
				emit(compactionUpdate{SessionUpdate: "compaction_update", CompactionID: fmt.Sprintf("compaction-%d", compactions),
					Status: "completed", Summary: []any{textBlock(c.Summary)}})
			}
			continue
		}
		m := it.Message
		if m == nil {
			continue
		}
		switch m.Role {
		case llm.RoleUser:
			for _, b := range m.Content {
				switch {
				case b.Type == llm.ContentText && b.Text != "":
					emit(contentChunk{SessionUpdate: "user_message_chunk", Content: textBlock(b.Text)})
				case b.Type == llm.ContentImage:
					emit(contentChunk{SessionUpdate: "user_message_chunk", Content: imageContent{Type: "image", Data: b.Data, MimeType: b.MimeType}})
				}
			}
		case llm.RoleAssistant:
			for _, b := range m.Content {
				switch {
				case b.Type == llm.ContentThinking && b.Thinking != "":
					emit(contentChunk{SessionUpdate: "agent_thought_chunk", Content: textBlock(b.Thinking)})
				case b.Type == llm.ContentText && b.Text != "":
					emit(contentChunk{SessionUpdate: "agent_message_chunk", Content: textBlock(b.Text)})
				case b.Type == llm.ContentToolCall:
					if _, seen := open[b.ID]; !seen {
						order = append(order, b.ID)
					}
					open[b.ID] = &callState{name: b.Name, args: b.Arguments, status: "pending"}
					emit(s.toolCall(cs, b.ID, b.Name, b.Arguments))
				}
			}
		case llm.RoleToolResult:
			c := open[m.ToolCallID]
			if c == nil {
				c = &callState{name: m.ToolName}
				emit(s.toolCall(cs, m.ToolCallID, m.ToolName, nil))
			}
			u := s.resultUpdate(cs, m.ToolCallID, m.ToolName, c.args, m.Content, m.Details, m.IsError)
			c.status = u.Status
			delete(open, m.ToolCallID)
			emit(u)
		}
	}
	for _, id := range order {
		if c := open[id]; c != nil && c.status == "pending" {
			delete(open, id)
			emit(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "failed",
				Content: resultContent([]llm.Content{llm.Text("This call has no result in the saved session.")})})
		}
	}
}
