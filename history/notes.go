// This file walks a session file's branch for its mode notes: which messages tell the model
// the session's mode, by the rule a live session follows while it saves (package session's
// modenote.go), so that a loaded session sends the same bytes as the live one did.

package history

import (
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/store"
)

// OrDefault returns mode, or the default mode for "" (a file of an older pid).
func OrDefault(mode string) string {
	if mode == "" {
		return prompt.ModeDefault
	}
	return mode
}

// ToldStart returns the mode a session described by h has told its model before any note:
// a subagent's prompt says its mode, pid's own prompt describes the default mode.
func ToldStart(h store.Header) string {
	if h.ParentSessionID != "" {
		return OrDefault(h.Mode)
	}
	return prompt.ModeDefault
}

// Notes returns, for a branch of a session file in file order (before store.SourceOrder)
// whose header is h, the entry id of each message that carries a note, with the note's
// mode: the first user message or tool result after the mode entries left a mode the model
// was not told yet.
func Notes(h store.Header, branch []store.Entry) map[string]string {
	out := map[string]string{}
	mode, told := OrDefault(h.Mode), ToldStart(h)
	for _, e := range branch {
		switch {
		case e.Kind == store.KindMode:
			mode = OrDefault(e.Mode)
		case e.Kind == store.KindMessage && e.Message != nil && prompt.TakesNote(e.Message.Role) && mode != told:
			told = mode
			out[e.ID] = mode
		}
	}
	return out
}
