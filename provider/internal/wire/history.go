// This file prepares the history a request carries: it leaves out what would make the
// request invalid, whatever the API.

package wire

import "github.com/pid-agent/pid/llm"

// History returns the messages a request should carry, in order:
//
//   - assistant messages that ended in StopError or StopAborted are left out (they are
//     incomplete turns; their tool calls were never run);
//   - a toolCall block is kept only when a toolResult for its id follows it before the
//     next assistant message, since both APIs reject a call without a result;
//   - a toolResult is kept only when it answers a call of the assistant message kept
//     before it, and only once per call (a repeated call id keeps its first block), since both APIs reject a result without a call;
//   - an assistant message left with no content is left out.
//
// msgs is not modified: kept assistant messages are copies with new Content slices.
func History(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	var pending map[string]bool // calls of the last kept assistant message still unanswered
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleAssistant:
			pending = nil
			if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
				continue
			}
			answered := map[string]bool{}
			for j := i + 1; j < len(msgs) && msgs[j].Role != llm.RoleAssistant; j++ {
				if msgs[j].Role == llm.RoleToolResult {
					answered[msgs[j].ToolCallID] = true
				}
			}
			calls := map[string]bool{}
			content := make([]llm.Content, 0, len(m.Content))
			for _, c := range m.Content {
				if c.Type == llm.ContentToolCall {
					if !answered[c.ID] || calls[c.ID] {
						continue
					}
					calls[c.ID] = true
				}
				content = append(content, c)
			}
			if len(content) == 0 {
				continue
			}
			kept := *m
			kept.Content = content
			out = append(out, kept)
			pending = calls
		case llm.RoleToolResult:
			if pending[m.ToolCallID] {
				delete(pending, m.ToolCallID)
				out = append(out, *m)
			}
		default:
			out = append(out, *m)
		}
	}
	return out
}
