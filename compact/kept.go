// This file writes what the model sees of a compaction: the summary, and what was kept word
// for word beside it (the latest request, the plan, the files touched).

package compact

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// KeptSummary returns the message the model sees in place of the messages a compaction
// summarized (summary, made when the transcript had at messages, cutting before firstKept),
// and what it kept: the summary, then, word for word, the latest user message when the
// compaction took it away (when it is among the messages kept after the cut, the model sees
// it there), the plan as it was when the compaction was made (plan, when not nil, finds it in
// a transcript), and the paths of the files read and changed in the messages compacted away.
// With none of the three it is the summary alone. It depends on its arguments only, so a
// loaded session sees the same bytes as the session did. Pure.
func KeptSummary(summary string, transcript []llm.Message, at, firstKept int, plan func([]llm.Message) ([]event.PlanEntry, bool)) (llm.Message, event.CompactionKept) {
	msg := SummaryMessage(summary)
	kept := event.CompactionKept{Files: []string{}}
	upTo := min(at, len(transcript))
	cut := min(firstKept, upTo)
	var request *llm.Message
	for i := upTo - 1; i >= 0; i-- {
		if transcript[i].Role == llm.RoleUser {
			if i < cut {
				request = &transcript[i]
			}
			break
		}
	}
	var entries []event.PlanEntry
	hasPlan := false
	if plan != nil {
		entries, hasPlan = plan(transcript[:upTo])
	}
	read, changed := filesTouched(transcript[:cut])
	if request == nil && !hasPlan && len(read)+len(changed) == 0 {
		return msg, kept
	}
	if request != nil {
		kept.UserMessage = true
		msg.Content = append(msg.Content, llm.Text("\nThe user's latest request, the one being worked on, word for word (the summary replaces it in the conversation):"))
		for _, c := range request.Content {
			if c.Type == llm.ContentText || c.Type == llm.ContentImage {
				msg.Content = append(msg.Content, c)
			}
		}
	}
	var b strings.Builder
	if hasPlan {
		kept.PlanEntries = len(entries)
		if len(entries) == 0 {
			b.WriteString("The current plan (todo_write) is empty.\n")
		} else {
			b.WriteString("The current plan (todo_write), as it stands; call todo_write to change it:\n")
			for _, e := range entries {
				fmt.Fprintf(&b, "- [%s] %s (priority %s)\n", e.Status, e.Content, e.Priority)
			}
		}
	}
	if len(read)+len(changed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Files used in the part of the conversation the summary replaces (read a file again before you rely on its content or edit it):\n")
		writeFileList(&b, "read", read)
		writeFileList(&b, "changed", changed)
		kept.Files = append(append(kept.Files, read...), changed...)
		slices.Sort(kept.Files)
		kept.Files = slices.Compact(kept.Files)
	}
	if b.Len() > 0 {
		// A block starts with a line break: a provider that joins a message's text blocks
		// joins them with one (OpenAI's chat completions), which makes a blank line.
		msg.Content = append(msg.Content, llm.Text("\n"+strings.TrimRight(b.String(), "\n")))
	}
	return msg, kept
}

// Readable is the text of a summary message as a person reads it: its text blocks
// joined by line breaks (as a provider that takes one text joins them), an image as a
// note.
func Readable(m llm.Message) string {
	var parts []string
	for _, c := range m.Content {
		switch c.Type {
		case llm.ContentText:
			parts = append(parts, c.Text)
		case llm.ContentImage:
			parts = append(parts, fmt.Sprintf("[image: %s]", c.MimeType))
		}
	}
	return strings.Join(parts, "\n")
}
