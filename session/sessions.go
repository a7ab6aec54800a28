// This file holds what a host does with saved sessions: list them, load one (live again in
// this daemon), fork one at a message, close and delete one. A session's file is owned by one
// daemon at a time (store's lock).

package session

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/review"
	"github.com/pid-agent/pid/sessionconfig"
	"github.com/pid-agent/pid/setup"
	"github.com/pid-agent/pid/store"
)

// PageSize is how many sessions List returns at most.
const PageSize = 50

// Summary is one session of List.
type Summary struct {
	SessionID    string `json:"sessionId"`
	Cwd          string `json:"cwd"`
	Title        string `json:"title"`
	CreatedAt    string `json:"createdAt"`
	UpdatedAt    string `json:"updatedAt"`
	MessageCount int    `json:"messageCount"`
	// ParentSessionID is, for a subagent's session, its parent's (subagent.go).
	ParentSessionID string `json:"parentSessionId,omitempty"`
}

// SavesSessions reports whether the host's sessions are saved (its sessions folder could be
// used): else they live until pid stops, and List, Load and Fork of a saved one fail with
// ErrUnavailable.
func (h *Host) SavesSessions() bool { return h.files != nil }

// SavedCwd returns the working folder a saved session was made in, read from its file's
// header: where a load will make it live. ErrUnknownSession for an id no saved session has,
// ErrUnavailable when sessions are not saved.
func (h *Host) SavedCwd(id string) (string, error) {
	if id == "" {
		return "", invalid("sessionId is required")
	}
	if h.files == nil {
		return "", fmt.Errorf("%w: saved sessions (see pid's log)", ErrUnavailable)
	}
	header, err := h.files.ReadHeader(id)
	if err != nil {
		return "", h.storeError(id, err)
	}
	return header.Cwd, nil
}

// List returns the saved sessions, newest updatedAt first, PageSize at a time: cwd "" lists
// every folder's, cursor "" starts at the newest; next is the cursor of the following page,
// "" when there is none.
func (h *Host) List(cwd, cursor string) (page []Summary, next string, err error) {
	if h.files == nil {
		return nil, "", fmt.Errorf("%w: saved sessions (see pid's log)", ErrUnavailable)
	}
	if cwd != "" {
		if !filepath.IsAbs(cwd) {
			return nil, "", invalid("cwd must be an absolute path, not %q", cwd)
		}
		cwd = filepath.Clean(cwd)
	}
	all, err := h.files.List(cwd)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrFailed, err)
	}
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, "", invalid("cursor %q is not one session/list gave", cursor)
		}
		start = min(n, len(all))
	}
	end := min(start+PageSize, len(all))
	page = make([]Summary, 0, end-start)
	for _, s := range all[start:end] {
		page = append(page, Summary{SessionID: s.ID, Cwd: s.Cwd, Title: s.Title, MessageCount: s.MessageCount, ParentSessionID: s.ParentSessionID,
			CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339Nano)})
	}
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return page, next, nil
}

// Load makes a saved session live in this daemon and returns it, with its items (the
// current branch, compactions where they happened). A session live here already is returned
// as it is. Problems found reading its file (a torn last line, unreadable lines) are told
// to the face as warnings; a tool call left without its result by a pid that stopped gets
// an error result saying so, saved like any message.
func (h *Host) Load(id string, o Options) (*Session, []Item, error) {
	if id == "" {
		return nil, nil, invalid("sessionId is required")
	}
	h.mu.Lock()
	live := h.sessions[id]
	h.mu.Unlock()
	if live != nil {
		return live, live.Items(), nil
	}
	if h.files == nil {
		return nil, nil, fmt.Errorf("%w: saved sessions (see pid's log)", ErrUnavailable)
	}
	f, loaded, err := h.files.OpenSession(id)
	if err != nil {
		return nil, nil, h.storeError(id, err)
	}
	notes := history.Notes(loaded.Header, loaded.Branch)
	loaded.Branch = store.SourceOrder(loaded.Branch)
	s, err := h.restore(f, loaded, loaded.Branch, notes, o)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	for _, p := range loaded.Problems {
		s.face.Warn(s, "reading the saved session: "+p)
	}
	gaps := unsavedOf(loaded.Branch)
	for _, g := range gaps {
		s.face.Warn(s, fmt.Sprintf("reading the saved session: it has a hole after its first %d items: saving failed there (%s), and what the session did next, until the entry after it, was not saved", g.Index, g.Reason))
	}
	s.saved.mu.Lock()
	s.saved.unsaved = gaps
	s.saved.mu.Unlock()
	s.closeInterrupted()
	s.keepMode()
	// Until its first write, the loaded session needs no descriptor but its lock's.
	if err := f.Rest(); err != nil {
		s.saved.mu.Lock()
		s.saveFailedLocked(err)
		s.saved.mu.Unlock()
	}
	return s, s.Items(), nil
}

// storeError maps the store's errors to the layer's.
func (h *Host) storeError(id string, err error) error {
	var le *store.LockedError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %q (no saved session has this id)", ErrUnknownSession, id)
	case errors.As(err, &le):
		return fmt.Errorf("%w: session %s is open in another pid (process %d); close it there first", ErrLocked, id, le.PID)
	}
	return fmt.Errorf("%w: session %s: %v", ErrFailed, id, err)
}

// restore re-creates a session from its header and the entries of a branch (all of them for
// a load, a prefix for a fork), with f as its file (nil: created at the first message).
// notes are the entry ids of the messages that carry a mode note (history.Notes).
func (h *Host) restore(f *store.File, loaded *store.Loaded, branch []store.Entry, notes map[string]string, o Options) (*Session, error) {
	cfg, err := sessionconfig.FromHeader(loaded.Header)
	if err != nil {
		return nil, fmt.Errorf("%w: the saved session cannot be re-created: %v", ErrFailed, err)
	}
	if o.MCPServers != nil && string(o.MCPServers) != "null" {
		cfg.MCPServers = o.MCPServers
	}
	r := &restoring{file: f, header: loaded.Header, mode: loaded.Header.Mode}
	if err := replay(r, &cfg, branch, notes); err != nil {
		return nil, err
	}
	if f != nil {
		r.marks = store.Marks(loaded.Entries)
		r.reviews, r.undone = review.Entries(loaded.Entries)
	}
	if f == nil {
		// A fork: the entries are written to its own file, ids of its own.
		r.entryIDs = make([]string, len(r.transcript))
	}
	o.ID = loaded.Header.ID
	s, err := h.build(cfg, o, r)
	if err == nil && f != nil {
		// What it paid: its whole file's calls, not only the branch it goes on from.
		s.countSaved(loaded)
	}
	return s, err
}

// replay adds the entries of a branch to r: its messages (with their mode notes, named by
// entry id in notes), compactions, model changes (cfg gets the last model) and mode changes.
func replay(r *restoring, cfg *Config, branch []store.Entry, notes map[string]string) error {
	h := history.Replay(branch, notes)
	for _, c := range h.ModelChanges {
		m, err := modelKinds.Decode(c.Config, setup.Source{Saved: true})
		if err != nil {
			return fmt.Errorf("%w: the saved session cannot be re-created: its model change %s: %v", ErrFailed, c.EntryID, err)
		}
		cfg.Model = m
	}
	r.transcript, r.entryIDs, r.compactions = append(r.transcript, h.Transcript...), append(r.entryIDs, h.EntryIDs...), h.Compactions
	r.calls, r.summaries, r.modelChanges, r.notes = h.Calls, h.Summaries, h.ModelChanges, h.Notes
	if h.ModeSaved {
		r.mode = h.Mode
	}
	return nil
}

// closeInterrupted gives every tool call of the transcript that has no result (pid stopped
// while it ran) an error result, saved, so the transcript stays valid for every provider.
// The batch's results are then put in source order, as the model would have seen them.
func (s *Session) closeInterrupted() {
	t := s.agent.Transcript()
	missing := store.UnansweredCalls(t)
	if len(missing) == 0 {
		return
	}
	for _, c := range missing {
		m := llm.Message{Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true, Timestamp: llm.Now(),
			Content: []llm.Content{llm.Text("This call was interrupted when pid stopped: it may not have finished, and its result was lost. Check its effects, and run it again if it is still needed.")}}
		s.saveMessage(&m)
		t = append(t, m)
	}
	s.saved.mu.Lock()
	if len(s.saved.entryIDs) == len(t) {
		store.SortResults(t, s.saved.entryIDs)
	}
	s.saved.mu.Unlock()
	s.syncFile()
	_ = s.agent.Restore(t)
}

// ForkAll is the count of Host.Fork that forks the whole conversation.
const ForkAll = -1

// Fork makes a new session whose transcript is the first count items of the given one (a
// live session of this daemon, or a saved one; ForkAll: all of them), with the model in
// force at that point; the original is untouched. count must leave no tool call without
// its result (ErrInvalid names the nearest valid counts). The new session's id is o.ID when
// set (a face that needs it before the session exists picks it with store.NewID), else a
// new one.
func (h *Host) Fork(id string, count int, o Options) (*Session, []Item, error) {
	if id == "" {
		return nil, nil, invalid("sessionId is required")
	}
	var loaded *store.Loaded
	var notes map[string]string
	h.mu.Lock()
	live := h.sessions[id]
	h.mu.Unlock()
	if live != nil {
		loaded, notes = live.snapshot()
	} else {
		if h.files == nil {
			return nil, nil, fmt.Errorf("%w: %q", ErrUnknownSession, id)
		}
		var err error
		if loaded, err = h.files.Read(id); err != nil {
			return nil, nil, h.storeError(id, err)
		}
		notes = history.Notes(loaded.Header, loaded.Branch)
		loaded.Branch = store.SourceOrder(loaded.Branch)
	}
	branch := loaded.Branch
	if count == ForkAll {
		count = store.ItemCount(branch)
	}
	if n := store.ItemCount(branch); count < 0 || count > n {
		return nil, nil, invalid("messageCount %d is out of range: the session has %d messages (compactions included)", count, n)
	}
	if valid := history.ForkCounts(branch); !slices.Contains(valid, count) {
		lo, hi := history.Nearest(valid, count)
		return nil, nil, invalid("messageCount %d would leave a tool call without its result; the nearest valid counts are %s", count, strings.Join(append(lo, hi...), " and "))
	}
	hdr := loaded.Header
	hdr.ForkedFrom = &store.Fork{SessionID: id, MessageCount: count}
	if hdr.ID = o.ID; hdr.ID == "" {
		hdr.ID = store.NewID()
	}
	hdr.CreatedAt = time.Now().UTC()
	prefix := store.ItemPrefix(branch, count)
	s, err := h.restore(nil, &store.Loaded{Header: hdr}, prefix, notes, o)
	if err != nil {
		return nil, nil, err
	}
	s.saved.mu.Lock()
	s.saved.header.ForkedFrom = hdr.ForkedFrom
	s.saved.mu.Unlock()
	s.copyEntries(prefix)
	s.keepMode()
	return s, s.Items(), nil
}

// copyEntries writes a fork's entries into its own file. Its mode entries are written anew,
// from its notes: one before each message that was saved in a mode the entries written so
// far do not leave (the results of a batch are in source order here, not in the order they
// ended), so that history.Notes finds the same notes in the fork's file.
func (s *Session) copyEntries(branch []store.Entry) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	f := s.writableLocked()
	if f == nil {
		return
	}
	newIDs := map[string]string{}
	mi, ci := 0, 0
	fileMode, told := history.OrDefault(s.saved.header.Mode), s.saved.toldStart
	for _, e := range branch {
		if e.Kind == store.KindMode {
			continue
		}
		if e.Kind == store.KindMessage && e.Message != nil && prompt.TakesNote(e.Message.Role) {
			if mode, ok := s.saved.notes[mi]; ok {
				told = mode
			}
			if told != fileMode {
				if _, err := f.Append(store.Entry{Kind: store.KindMode, Timestamp: e.Timestamp, Mode: told}); err != nil {
					s.saveFailedLocked(err)
					return
				}
				fileMode = told
			}
		}
		old := e.ID
		e.ID, e.ParentID = "", ""
		if e.Kind == store.KindCompaction && e.Compaction != nil {
			c := *e.Compaction
			c.FirstKeptID = newIDs[c.FirstKeptID]
			e.Compaction = &c
		}
		ids, err := f.Append(e)
		if err != nil {
			s.saveFailedLocked(err)
			return
		}
		newIDs[old] = ids[0]
		switch {
		case e.Kind == store.KindMessage && e.Message != nil && mi < len(s.saved.entryIDs):
			s.saved.entryIDs[mi] = ids[0]
			mi++
		case e.Kind == store.KindCompaction && ci < len(s.saved.compactions):
			s.saved.compactions[ci].EntryID = ids[0]
			ci++
		}
	}
	s.saved.mode = fileMode
	if err := f.Sync(); err != nil {
		s.saveFailedLocked(err)
	}
}

// snapshot returns the session as a file would hold it, for a fork of a live session: its
// items, with its model changes where they happened, and the entry ids of the messages that
// carry a mode note. Items are named m<index among the items>, model changes model<n>.
func (s *Session) snapshot() (*store.Loaded, map[string]string) {
	t := s.agent.Transcript()
	mode := s.Mode()
	s.saved.mu.Lock()
	header := s.saved.header
	header.Mode = mode
	comps := append([]history.Compaction(nil), s.saved.compactions...)
	changes := append([]history.ModelChange(nil), s.saved.modelChanges...)
	notes := maps.Clone(s.saved.notes)
	s.saved.mu.Unlock()
	return history.Snapshot(header, t, comps, changes, notes)
}

// unsavedOf returns the holes of a branch: its unsaved markers, each placed after the
// items before it.
func unsavedOf(branch []store.Entry) []Unsaved {
	var out []Unsaved
	n := 0
	for _, e := range branch {
		switch {
		case store.IsItem(e):
			n++
		case e.Kind == store.KindUnsaved && e.Unsaved != nil:
			out = append(out, Unsaved{Index: n, Reason: e.Unsaved.Reason, Timestamp: e.Timestamp.UnixMilli()})
		}
	}
	return out
}

// CloseSession unloads the session from this daemon: a prompt or compaction it runs is
// cancelled first (its request answers as after a cancel), then its file is closed (it stays,
// and its lock is released) and its MCP servers that no other session holds are stopped.
func (h *Host) CloseSession(id string) error {
	s, err := h.Get(id)
	if err != nil {
		return err
	}
	for {
		s.CancelRun()
		s.run.mu.Lock()
		if !s.run.running {
			s.run.closed = true // Begin refuses from now on
			s.run.mu.Unlock()
			break
		}
		s.run.mu.Unlock()
	}
	h.mu.Lock()
	delete(h.sessions, id)
	h.mu.Unlock()
	s.stopSessionHooks()
	s.closeFile()
	s.closeMCP(true)
	s.closeCheckpoints()
	s.net.close()
	s.ws.Close()
	return nil
}

// DeleteSession closes the session when it is live here, and removes its file.
func (h *Host) DeleteSession(id string) error {
	if id == "" {
		return invalid("sessionId is required")
	}
	h.mu.Lock()
	live := h.sessions[id] != nil
	h.mu.Unlock()
	if live {
		if err := h.CloseSession(id); err != nil {
			return err
		}
	}
	if h.files == nil {
		if live {
			return nil
		}
		return fmt.Errorf("%w: %q", ErrUnknownSession, id)
	}
	h.deleteCheckpoints(id)
	h.deleteWorktrees(id)
	if err := h.files.Delete(id); err != nil {
		if errors.Is(err, store.ErrNotFound) && live {
			return nil // never saved: it had no message
		}
		return h.storeError(id, err)
	}
	return nil
}

// UsesEditorTerminals reports whether the settings let bash run commands in an editor's
// terminals when the editor offers them (the user's "acp": {"terminals": false} says no).
func (h *Host) UsesEditorTerminals() bool { return h.loader == nil || !h.loader.ACP().NoTerminals }
