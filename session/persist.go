// This file saves a session as it happens: its header (what re-creates it), each message
// of its transcript before the face announces it, and its compactions, in the session's
// file (package store); and it lists the session's items (messages and compactions, package
// history) the way session/load and session/fork count them.

package session

import (
	"fmt"
	"time"

	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/quietsync"
	"github.com/pid-agent/pid/store"
)

// saveMessage appends a transcript message to the session's file, creating the file with
// the first message. A failure is reported once; the session goes on unsaved.
//
// Contract: called from the run's sink (the loop's goroutine), before the message's
// MessageEnd goes to the face.
func (s *Session) saveMessage(m *llm.Message) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if m.Role == llm.RoleToolResult {
		if id, ok := s.saved.presaved[m.ToolCallID]; ok {
			delete(s.saved.presaved, m.ToolCallID) // saved at its ToolEnd
			if mode, ok := s.saved.pending[m.ToolCallID]; ok {
				delete(s.saved.pending, m.ToolCallID)
				s.noteAtLocked(len(s.saved.entryIDs), mode)
			}
			s.saved.entryIDs = append(s.saved.entryIDs, id)
			return
		}
	}
	if prompt.TakesNote(m.Role) {
		if mode := s.noteLocked(); mode != "" {
			s.noteAtLocked(len(s.saved.entryIDs), mode)
		}
	}
	id := ""
	if f := s.writableLocked(); f != nil {
		s.saved.lastWrite.Store(time.Now().UnixNano())
		ids, err := f.Append(store.Entry{Kind: store.KindMessage, Timestamp: time.Now().UTC(), Message: m})
		if err != nil {
			s.saveFailedLocked(err)
		} else {
			id = ids[0]
		}
	}
	s.saved.entryIDs = append(s.saved.entryIDs, id)
}

// saveResult appends a tool call's result message at its ToolEnd, before the face announces
// that end (a result the editor saw end is on disk, as a message is before its
// messageEnd). Results are thus written in completion order; the message's own MessageEnd,
// later and in source order, then saves nothing, and a load puts them back in source order
// (see sourceOrder).
//
// Contract: called from the run's sink, once per call, before the ToolEnd goes to the face.
func (s *Session) saveResult(m *llm.Message) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if mode := s.noteLocked(); mode != "" {
		if s.saved.pending == nil {
			s.saved.pending = map[string]string{}
		}
		s.saved.pending[m.ToolCallID] = mode
	}
	id := ""
	if f := s.writableLocked(); f != nil {
		now := time.Now()
		s.saved.lastWrite.Store(now.UnixNano())
		ids, err := f.Append(store.Entry{Kind: store.KindMessage, Timestamp: now, Message: m})
		if err != nil {
			s.saveFailedLocked(err)
		} else {
			id = ids[0]
		}
	}
	if s.saved.presaved == nil {
		s.saved.presaved = map[string]string{}
	}
	s.saved.presaved[m.ToolCallID] = id
}

// saveCompaction appends a compaction to the file. Caller holds no lock.
func (s *Session) saveCompaction(c *history.Compaction) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	s.saved.compactions = append(s.saved.compactions, *c)
	f := s.writableLocked()
	if f == nil {
		return
	}
	kept := ""
	if c.FirstKept < len(s.saved.entryIDs) {
		kept = s.saved.entryIDs[c.FirstKept]
	}
	ids, err := f.Append(store.Entry{Kind: store.KindCompaction, Timestamp: c.Time,
		Compaction: &store.Compaction{Summary: c.Summary, FirstKeptID: kept, TokensBefore: c.TokensBefore, Reason: c.Reason}})
	if err != nil {
		s.saveFailedLocked(err)
		return
	}
	s.saved.compactions[len(s.saved.compactions)-1].EntryID = ids[0]
	if err := f.Sync(); err != nil {
		s.saveFailedLocked(err)
	}
}

// openFileLocked returns the session's file, creating it when the store is there and saving
// has not failed. Caller holds s.saved.mu.
func (s *Session) openFileLocked() *store.File {
	if s.saved.file != nil || s.saved.err != nil || s.host.files == nil {
		return s.saved.file
	}
	f, err := s.host.files.Create(s.saved.header)
	if err != nil {
		s.saveFailedLocked(err)
		return nil
	}
	s.saved.file = f
	return f
}

// writableLocked returns the session's file when what the session does is saved (see
// openFileLocked), and nil once saving has failed: after a failed write nothing more of the
// session is written, so that its file never holds a transcript with a hole that reads as
// whole. Each time it refuses, it tries to end the file with the unsaved marker again (a
// no-op once one is written), so that a load says what is missing. Caller holds s.saved.mu.
func (s *Session) writableLocked() *store.File {
	if s.saved.err == nil {
		return s.openFileLocked()
	}
	if s.saved.file != nil {
		_ = s.saved.file.MarkUnsaved(s.saved.err.Error())
	}
	return nil
}

// saveFailedLocked stops saving, ends the file with an unsaved marker when that still fits
// (a later load reports it), and tells the face why, once. Caller holds s.saved.mu.
func (s *Session) saveFailedLocked(err error) {
	if s.saved.err != nil {
		return
	}
	s.saved.err = err
	if s.saved.file != nil {
		_ = s.saved.file.MarkUnsaved(err.Error())
	}
	s.face.Warn(s, fmt.Sprintf("this session is no longer saved (its messages stay in memory until pid stops; loading it later says what is missing): %v", err))
}

// When to fsync after a turn ends: once the file has had no write for syncQuiet (the model
// is thinking, the person is reading), and in any case within syncMaxDelay. A burst of quick
// turns (tools that take microseconds) is flushed together after it, so fsyncs, and the
// appends a journal commit holds up meanwhile, do not slow it down; a turn of a real model
// gets its fsync right after it.
const (
	syncQuiet    = 50 * time.Millisecond
	syncMaxDelay = time.Second
)

// syncFile flushes the file to disk, now (the end of a prompt: its answer will say the
// transcript is safe).
func (s *Session) syncFile() {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if s.saved.file == nil || s.saved.err != nil {
		return
	}
	if err := s.saved.file.Sync(); err != nil {
		s.saveFailedLocked(err)
	}
}

// syncSoon asks for the file to be flushed to disk without waiting for it (the end of a
// turn, of a prompt): an fsync costs from a quarter of a millisecond to several, more than a
// turn of quick tools, and the messages are in the kernel already (a kill -9 loses nothing;
// only the machine stopping could). Requests made while one waits are served by one fsync,
// after the file has been quiet a moment (see syncQuiet; package quietsync). The fsync is
// File.Rest: it also closes the descriptor until the next write (an idle session holds only
// its lock's).
func (s *Session) syncSoon() {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if s.saved.file == nil || s.saved.err != nil {
		return
	}
	if s.saved.syncer == nil {
		f := s.saved.file
		s.saved.syncer = quietsync.Start(quietsync.Config{Quiet: syncQuiet, MaxDelay: syncMaxDelay,
			LastWrite: func() time.Time { return time.Unix(0, s.saved.lastWrite.Load()) },
			Flush: func() {
				if err := f.Rest(); err != nil {
					s.saved.mu.Lock()
					s.saveFailedLocked(err)
					s.saved.mu.Unlock()
				}
			}})
	}
	s.saved.syncer.Request()
}

// closeFile stops the syncer and closes the session's file (flushing it and releasing its
// lock).
func (s *Session) closeFile() {
	s.saved.mu.Lock()
	syncer := s.saved.syncer
	s.saved.syncer = nil
	s.saved.mu.Unlock()
	if syncer != nil {
		syncer.Close()
	}
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	if s.saved.file != nil {
		s.writableLocked() // a last try at the unsaved marker, when saving failed
		s.saved.file.Close()
	}
}

// Unsaved is a hole in a saved session, as session/load reports it: saving failed there (a
// full disk), and what the session did after it, until the next item, is not in its file.
type Unsaved struct {
	// Index is the number of the session's items (as loaded) before the hole.
	Index int `json:"index"`
	// Reason is why saving failed.
	Reason string `json:"reason"`
	// Timestamp is when saving failed (Unix milliseconds).
	Timestamp int64 `json:"timestamp"`
}

// Unsaved returns the holes its file had when the session was loaded (nil for none): the
// places where messages the session had are missing. Safe for concurrent use.
func (s *Session) Unsaved() []Unsaved {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	return append([]Unsaved(nil), s.saved.unsaved...)
}

// Item is one entry of a session as session/load and session/fork list it: a transcript
// message, or a compaction at the place it happened.
type Item = history.Item

// CompactionItem is a compaction as listed among a session's items.
type CompactionItem = history.CompactionItem

// Items returns the session's items: its transcript with its compactions where they
// happened.
func (s *Session) Items() []Item {
	t := s.agent.Transcript()
	s.saved.mu.Lock()
	comps := append([]history.Compaction(nil), s.saved.compactions...)
	s.saved.mu.Unlock()
	return history.Items(t, comps)
}
