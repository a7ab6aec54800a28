// This file holds Counter: ContextTokens of a transcript that only grows, kept up to date at
// the cost of the new messages, so that checking the context before every model call does not
// make a run quadratic in its length.

package compact

import "github.com/pid-agent/pid/llm"

// Counter keeps what ContextTokensSince needs of a growing transcript: the prefix sums of
// EstimateTokens and, for each message, the last assistant message with trusted usage at or
// before it.
//
// A Counter is not safe for concurrent use; its owner calls it from one goroutine (the
// loop's) at a time.
type Counter struct {
	sums      []int // sums[i] = EstimateTokens of transcript[:i]
	lastUsage []int // lastUsage[i] = index of the last usable usage in transcript[:i+1], or -1
	used      []int // used[i] = the reported size of transcript[i] when it is usable, else 0
}

// Update brings the counter up to transcript, which must extend the transcript of the last
// call (its first messages the same, in the same order). A shorter transcript (a restore)
// starts it over.
func (c *Counter) Update(transcript []llm.Message) {
	if len(transcript) < len(c.used) {
		*c = Counter{}
	}
	if c.sums == nil {
		c.sums = []int{0}
	}
	for i := len(c.used); i < len(transcript); i++ {
		m := &transcript[i]
		c.sums = append(c.sums, c.sums[i]+EstimateTokens(m))
		u := 0
		if m.Role == llm.RoleAssistant && m.Usage != nil && m.StopReason != llm.StopError && m.StopReason != llm.StopAborted {
			u = reported(m.Usage)
		}
		c.used = append(c.used, u)
		last := -1
		if i > 0 {
			last = c.lastUsage[i-1]
		}
		if u > 0 {
			last = i
		}
		c.lastUsage = append(c.lastUsage, last)
	}
}

// Tokens returns the size of a context made of a prefix worth prefix tokens (a summary
// message, say) and then transcript[from:], trusting reported usage only from
// transcript[since:]: what ContextTokensSince would return for that context.
func (c *Counter) Tokens(prefix, from, since int) int {
	n := len(c.used)
	if from > n {
		from = n
	}
	if n > 0 {
		if last := c.lastUsage[n-1]; last >= from && last >= since {
			return c.used[last] + c.sums[n] - c.sums[last+1]
		}
	}
	return prefix + c.sums[n] - c.sums[from]
}

// Since returns the estimated tokens of the messages from transcript[from:] on, transcript
// being the one of the last Update: how much the context grew since it was from messages
// long. A from past its end counts 0.
func (c *Counter) Since(from int) int {
	n := len(c.used)
	if from >= n {
		return 0
	}
	return c.sums[n] - c.sums[max(from, 0)]
}
