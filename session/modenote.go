// This file decides which messages tell the model the session's mode (the note itself is
// package prompt's: prompt.ModeNote), so that a mode change keeps the provider's prompt
// cache: the first user message or tool result saved after the mode changed carries, in
// what the model sees of it, a short note saying what the mode is now and means. The
// transcript and the file keep the message as it was; the note is added to the model's view
// (compaction.go's view).
//
// Which messages carry a note follows from the order in which the session's file gets its
// messages and its mode entries, and nothing else: while saving, the mode of the last mode
// entry (saved.mode) is compared with the mode the model was last told (saved.told) each time
// a user message or a tool result is saved, and a difference puts a note on that message.
// Loading walks the file the same way (history.Notes), so a loaded session sends the same bytes
// as the live one did. A session starts having told the model "default" (its system prompt
// describes that mode), a subagent its own mode (its prompt says it).

package session

import (
	"github.com/pid-agent/pid/history"
)

// noteLocked returns the mode to note on the user message or tool result being saved ("" for
// none), and takes it as told. Caller holds s.saved.mu.
func (s *Session) noteLocked() string {
	if s.saved.mode == s.saved.told {
		return ""
	}
	s.saved.told = s.saved.mode
	return s.saved.told
}

// noteAtLocked puts the note of mode on transcript message i. Caller holds s.saved.mu.
func (s *Session) noteAtLocked(i int, mode string) {
	if s.saved.notes == nil {
		s.saved.notes = map[int]string{}
	}
	s.saved.notes[i] = mode
}

// notesFrom returns the notes of transcript messages from index from on (nil when none).
func (s *Session) notesFrom(from int) map[int]string {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	var out map[int]string
	for i, m := range s.saved.notes {
		if i >= from {
			if out == nil {
				out = map[int]string{}
			}
			out[i] = m
		}
	}
	return out
}

// hasNotes reports whether a message of the transcript carries a note.
func (s *Session) hasNotes() bool {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	return len(s.saved.notes) > 0
}

// toldBefore returns the mode the model had been told before transcript message i: the note
// of the last message before it that has one, else the session's start.
func (s *Session) toldBefore(i int) string {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	best, mode := -1, s.saved.toldStart
	for j, m := range s.saved.notes {
		if j < i && j > best {
			best, mode = j, m
		}
	}
	return mode
}

// startTold returns the mode the model was told before any note.
func (s *Session) startTold() string {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	return s.saved.toldStart
}

// restoreNotes sets the session's notes from a restored transcript's: notes by transcript
// index, what the model was told at the start, and fileMode, the mode the file's entries
// leave. Called by build before the session is published, and by a rewind holding the
// session.
func (s *Session) restoreNotes(notes map[int]string, start, fileMode string) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	s.saved.notes, s.saved.toldStart, s.saved.pending = notes, start, nil
	s.saved.told, s.saved.mode = start, history.OrDefault(fileMode)
	best := -1
	for i, m := range notes {
		if i > best {
			best, s.saved.told = i, m
		}
	}
}

// keepMode writes a mode entry when the session's mode is not the one its file's entries
// leave (a loaded session whose saved mode is not offered, a rewound conversation whose
// branch left another mode), so that the notes after it are found again by a later load.
func (s *Session) keepMode() {
	mode := s.Mode()
	s.saved.mu.Lock()
	same := s.saved.mode == mode
	s.saved.mu.Unlock()
	if !same {
		s.saveMode(mode)
	}
}
