// This file measures the context: a per-message token estimate, and the context's size
// from the provider's reported usage plus that estimate.

package compact

import "github.com/pid-agent/pid/llm"

// ImageTokens is the estimate for one image block, as pi counts it (4800 characters).
const ImageTokens = 1200

// EstimateTokens estimates the tokens of one message as its characters divided by 4,
// rounded up, counting the text and thinking blocks, the name and raw arguments of tool
// calls, and the text of tool results; each image counts ImageTokens. Characters are
// counted as UTF-8 bytes, which is fast and errs high, not low, for non-ASCII text.
// A nil message counts 0.
func EstimateTokens(m *llm.Message) int {
	if m == nil {
		return 0
	}
	chars, images := 0, 0
	for i := range m.Content {
		c := &m.Content[i]
		switch c.Type {
		case llm.ContentText:
			chars += len(c.Text)
		case llm.ContentThinking:
			chars += len(c.Thinking)
		case llm.ContentToolCall:
			chars += len(c.Name) + len(c.Arguments)
		case llm.ContentImage:
			images++
		}
	}
	return (chars+3)/4 + images*ImageTokens
}

// ContextTokens returns the size, in tokens, of a context made of msgs (what the model
// sees): the usage the provider reported for the last assistant message that has one
// (input + output + cacheRead + cacheWrite, or its total when those are all 0), plus
// EstimateTokens of every message after it; with no usage anywhere, the estimate of every
// message. An assistant message that failed or was aborted has no usage worth trusting
// and is passed over, as pi does. The system prompt and tool definitions are counted only
// through the reported usage.
//
// After a compaction, the kept messages' usage is stale: it counted what was summarized
// since. Use ContextTokensSince then.
func ContextTokens(msgs []llm.Message) int { return ContextTokensSince(msgs, 0) }

// ContextTokensSince is ContextTokens trusting reported usage only from msgs[since:]:
// messages before since are estimated. A caller whose msgs start with a summary message
// passes the index of the first message added after that compaction (len(msgs) right
// after it), so that a kept assistant message's usage, which measured the context before
// the compaction, cannot set off another compaction at once.
func ContextTokensSince(msgs []llm.Message, since int) int {
	since = max(since, 0)
	tokens := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if i >= since && m.Role == llm.RoleAssistant && m.Usage != nil && m.StopReason != llm.StopError && m.StopReason != llm.StopAborted {
			if used := reported(m.Usage); used > 0 {
				return tokens + used
			}
		}
		tokens += EstimateTokens(m)
	}
	return tokens
}

// reported is the context size a usage report stands for.
func reported(u *llm.Usage) int {
	if sum := u.Input + u.Output + u.CacheRead + u.CacheWrite; sum > 0 {
		return sum
	}
	return u.Total
}
