// This file finds where a transcript may be cut: CutPoint for compaction, ValidCuts for
// boundaries such as a fork's.
//
// Tool calls and results pair up as the providers pair them (see wire.History): a result
// answers a call of the nearest assistant message before it, and only the first result
// for a call counts. An assistant message that failed or was aborted is never sent to a
// model and its calls are never run, so its calls need no result; a call that no result
// answers (a crash mid-batch) is dropped by the providers, so it needs none either.

package compact

import "github.com/pid-agent/pid/llm"

// ValidCuts returns, in increasing order, every n from 0 to len(msgs) such that msgs[:n]
// leaves no tool call without its result: no result in msgs[n:] answers a call in
// msgs[:n]. 0 and len(msgs) are always valid. Cuts inside a batch (between an assistant
// message and the last result of its calls) are not.
func ValidCuts(msgs []llm.Message) []int {
	cuts := make([]int, 0, len(msgs)+1)
	cuts = append(cuts, 0)
	reach := -1 // the last result of the last assistant message seen so far
	for n := 1; n <= len(msgs); n++ {
		if msgs[n-1].Role == llm.RoleAssistant {
			reach = lastResult(msgs, n-1)
		}
		if n > reach {
			cuts = append(cuts, n)
		}
	}
	return cuts
}

// lastResult returns the index of the last message holding the first result of one of the
// calls of msgs[j], an assistant message, or -1 when none does (no calls, no results, or
// a failed or aborted message).
func lastResult(msgs []llm.Message, j int) int {
	a := &msgs[j]
	if a.StopReason == llm.StopError || a.StopReason == llm.StopAborted {
		return -1
	}
	var ids []string
	for i := range a.Content {
		if a.Content[i].Type == llm.ContentToolCall {
			ids = append(ids, a.Content[i].ID)
		}
	}
	if len(ids) == 0 {
		return -1
	}
	var byID map[string]bool // unanswered calls, for large batches
	if len(ids) > 16 {
		byID = make(map[string]bool, len(ids))
		for _, id := range ids {
			byID[id] = true
		}
	}
	last, open := -1, len(ids)
	for k := j + 1; k < len(msgs) && msgs[k].Role != llm.RoleAssistant && open > 0; k++ {
		if msgs[k].Role != llm.RoleToolResult {
			continue
		}
		id := msgs[k].ToolCallID
		if byID != nil {
			if byID[id] {
				delete(byID, id)
				last, open = k, open-1
			}
			continue
		}
		for i, want := range ids {
			if want == id {
				// Answered: a later result for the same call does not count.
				ids[i], ids[len(ids)-1] = ids[len(ids)-1], ids[i]
				ids = ids[:len(ids)-1]
				last, open = k, open-1
				break
			}
		}
	}
	return last
}

// CutPoint returns the index of the first message to keep when msgs, what the model sees,
// is compacted: msgs[:first] is summarized, msgs[first:] is kept word for word.
//
// Walking back from the end, it finds the message at which the kept messages reach
// keepRecent estimated tokens (EstimateTokens), and cuts just before it if that is a
// valid cut (ValidCuts) before a message that is not a tool result; otherwise it moves
// back to the nearest such cut, which is the assistant message that made the calls of a
// batch, or the user message starting a turn. So the kept messages are worth at least
// keepRecent tokens, and they never start with a tool result nor hold the result of a
// summarized call. Only when moving back leaves nothing to summarize does it move
// forward instead, to the nearest such cut after that message, keeping less than
// keepRecent: a single huge message is then summarized rather than kept.
//
// When msgs[0] is a summary message (IsSummaryMessage), it is always summarized, never
// kept, and does not count towards keepRecent.
//
// ok is false, with first 0, when there is nothing worth summarizing: all of msgs is
// worth less than keepRecent, or no cut leaves a message to summarize other than a
// previous summary and a message to keep.
func CutPoint(msgs []llm.Message, keepRecent int) (first int, ok bool) {
	start := 0
	if len(msgs) > 0 {
		if _, isSummary := IsSummaryMessage(&msgs[0]); isSummary {
			start = 1
		}
	}
	at, kept := -1, 0
	for k := len(msgs) - 1; k >= start; k-- {
		kept += EstimateTokens(&msgs[k])
		if kept >= keepRecent {
			at = k
			break
		}
	}
	if at < 0 {
		return 0, false // everything is worth less than keepRecent
	}

	// Back from at: j is the last assistant message before k, reach the last result of
	// its calls; k is a valid cut when k > reach.
	j, reach := -2, -1
	for k := at; k > start; k-- {
		if j >= k || j == -2 {
			j = lastAssistant(msgs, k)
			reach = -1
			if j >= 0 {
				reach = lastResult(msgs, j)
			}
		}
		if k > reach && msgs[k].Role != llm.RoleToolResult {
			return k, true
		}
	}

	// Forward from at.
	j = lastAssistant(msgs, at+1)
	reach = -1
	if j >= 0 {
		reach = lastResult(msgs, j)
	}
	for k := at + 1; k < len(msgs); k++ {
		if msgs[k-1].Role == llm.RoleAssistant {
			reach = lastResult(msgs, k-1)
		}
		if k > reach && msgs[k].Role != llm.RoleToolResult {
			return k, true
		}
	}
	return 0, false
}

// lastAssistant returns the index of the last assistant message in msgs[:k], or -1.
func lastAssistant(msgs []llm.Message, k int) int {
	for i := k - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return -1
}
