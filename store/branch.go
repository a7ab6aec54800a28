// This file reads a session's branch (the entries from its root to its last one, in file
// order) as the session layer needs it: its items (the messages and compactions a face
// lists), the tool results of each batch in the order of their calls, the calls left
// without a result, and its checkpoint marks. Pure functions: they change no entry.

package store

import (
	"slices"

	"github.com/pid-agent/pid/llm"
)

// SourceOrder returns branch with each batch's tool results in the order of their calls in
// the assistant message before them: they are written as each call ends (completion
// order), and the model is given them in source order (R14). The entries written among
// them that are no messages (a mode changed while the batch ran) keep their places, and
// the results are sorted over the places results hold; branch is not modified.
func SourceOrder(branch []Entry) []Entry {
	isResult := func(e Entry) bool {
		return e.Kind == KindMessage && e.Message != nil && e.Message.Role == llm.RoleToolResult
	}
	var out []Entry
	for i := 0; i < len(branch); i++ {
		a := branch[i]
		if a.Kind != KindMessage || a.Message == nil || a.Message.Role != llm.RoleAssistant {
			continue
		}
		// The batch's span: its results, and the entries that are no messages among them.
		var slots []int
		j := i + 1
		for ; j < len(branch) && (isResult(branch[j]) || branch[j].Kind == KindMode || branch[j].Kind == KindModel); j++ {
			if isResult(branch[j]) {
				slots = append(slots, j)
			}
		}
		if len(slots) < 2 {
			continue
		}
		order := callOrder(a.Message)
		results := make([]Entry, len(slots))
		for k, at := range slots {
			results[k] = branch[at]
		}
		byCall := func(x, y Entry) int { return rank(order, x.Message) - rank(order, y.Message) }
		if slices.IsSortedFunc(results, byCall) {
			continue
		}
		if out == nil {
			out = slices.Clone(branch)
		}
		slices.SortStableFunc(results, byCall)
		for k, at := range slots {
			out[at] = results[k]
		}
		i = j - 1
	}
	if out == nil {
		return branch
	}
	return out
}

// SortResults puts the tool results at the end of transcript t, after its last assistant
// message, in the order of that message's calls, moving ids (one per message) alike.
func SortResults(t []llm.Message, ids []string) {
	last := -1
	for i := len(t) - 1; i >= 0; i-- {
		if t[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 || last == len(t)-1 {
		return
	}
	order := callOrder(&t[last])
	tail := t[last+1:]
	for _, m := range tail {
		if m.Role != llm.RoleToolResult {
			return
		}
	}
	idx := make([]int, len(tail))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return rank(order, &tail[x]) - rank(order, &tail[y]) })
	msgs := slices.Clone(tail)
	tailIDs := slices.Clone(ids[last+1:])
	for to, from := range idx {
		tail[to] = msgs[from]
		ids[last+1+to] = tailIDs[from]
	}
}

// callOrder maps the id of each tool call of assistant message a to its place.
func callOrder(a *llm.Message) map[string]int {
	order := map[string]int{}
	for _, c := range a.Content {
		if c.Type == llm.ContentToolCall {
			if _, dup := order[c.ID]; !dup {
				order[c.ID] = len(order)
			}
		}
	}
	return order
}

// rank is the place of result m's call in order; results of unknown calls go last.
func rank(order map[string]int, m *llm.Message) int {
	if r, ok := order[m.ToolCallID]; ok {
		return r
	}
	return len(order)
}

// UnansweredCalls returns the tool calls of the last assistant message that have no result
// after it (only the last one can lack them: results follow their calls).
func UnansweredCalls(t []llm.Message) []llm.ToolCall {
	last := -1
	for i := len(t) - 1; i >= 0; i-- {
		if t[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range t[last+1:] {
		if m.Role == llm.RoleToolResult {
			answered[m.ToolCallID] = true
		}
	}
	var out []llm.ToolCall
	for _, c := range t[last].Content {
		if c.Type == llm.ContentToolCall && !answered[c.ID] {
			out = append(out, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return out
}

// IsItem reports whether a file entry is one of a session's items (a message or a
// compaction), as session/load and session/fork count them; model changes are not.
func IsItem(e Entry) bool {
	return e.Kind == KindMessage && e.Message != nil || e.Kind == KindCompaction && e.Compaction != nil
}

// ItemCount returns how many items a branch holds.
func ItemCount(branch []Entry) int {
	n := 0
	for _, e := range branch {
		if IsItem(e) {
			n++
		}
	}
	return n
}

// ItemPrefix returns the entries of branch that hold its first count items, with the model
// changes among them and those that follow them before the next item (the model that
// would have answered next).
func ItemPrefix(branch []Entry, count int) []Entry {
	n := 0
	for i, e := range branch {
		if !IsItem(e) {
			continue
		}
		if n == count {
			return branch[:i]
		}
		n++
	}
	return branch
}

// Marks returns the checkpoint marks of a session file's entries (all of them, on every
// branch: a rewound conversation's checkpoints can still be gone back to).
func Marks(entries []Entry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.Kind == KindCheckpoint && e.Checkpoint != nil {
			out[e.Checkpoint.ID] = e.ID
		}
	}
	return out
}

// LastPromptCheckpoint returns the checkpoint of the last prompt on a session file's
// branch: the last checkpoint mark (not a rewind's own) that a user message follows on the
// branch. A mark a rewind went back to is on the branch with no message after it.
func LastPromptCheckpoint(branch []Entry) (id, prompt string) {
	var cand *Checkpoint
	for _, e := range branch {
		switch {
		case e.Kind == KindCheckpoint && e.Checkpoint != nil && e.Checkpoint.Safety == "":
			cand = e.Checkpoint
		case e.Kind == KindMessage && e.Message != nil && e.Message.Role == llm.RoleUser && cand != nil:
			id, prompt = cand.ID, cand.Prompt
			cand = nil
		}
	}
	return id, prompt
}
