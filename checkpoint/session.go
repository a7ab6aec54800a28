// This file holds Session, one session's checkpoints: opening one per prompt, keeping a
// file's state before write or edit changes it, and the snapshots around each bash call.

package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/search"
)

// Session is one session's checkpoints. Safe for concurrent use: the calls of a parallel
// batch record into the same checkpoint.
type Session struct {
	st   *Store
	id   string
	ws   search.Fence
	path string // the journal

	// mu guards the journal and what it says.
	mu   sync.Mutex
	j    journal
	byID map[string]*cp
	cur  *cp
	// last is each path's state when pid last changed it (after a tool call or a rewind);
	// a path missing from it, or mapped to nil, is one whose last change pid did not see
	// end (pid stopped during it).
	last map[string]*State

	// writing is held for reading by each write or edit from before it changes its file
	// until after (Writing), and for writing by the snapshots around a bash call: a
	// snapshot taken while a write of the same batch is half done would see its temporary
	// file, record it as the command's (added, or deleted and then made again by a
	// rewind), and miss the write's own before state. Lock order: writing, then the
	// store's gate, then snapMu, then mu.
	writing sync.RWMutex

	// snapMu is held by the one snapshot running; it guards the stat cache.
	snapMu sync.Mutex
	cache  map[string]cached
	warmed bool
	// manifest is the blob of the cache as last kept (keepManifest); "" once it changed.
	manifest string

	// gen counts the changes recorded (Generation).
	gen atomic.Uint64

	// bg guards the goroutines the session starts (Warm's snapshot, End's eviction pass):
	// Close cancels them and waits for them, so that none outlives the session or uses its
	// workspace after the owner closed it.
	bg struct {
		mu     sync.Mutex
		closed bool
		wg     sync.WaitGroup
		ctx    context.Context
		cancel context.CancelFunc
	}
}

// cached is a file's state in the stat cache, with what tells whether it changed since.
type cached struct {
	st         State
	dev, ino   uint64
	ctime      int64
	statPerm   uint32
	statSize   int64
	statMTime  int64
	regularish bool
}

// Session returns the checkpoints of session id, whose files are in ws (the session's
// workspace: a workspace.Workspace is a search.Fence), reading back what
// its journal holds. Contract: one Session per session id at a time; Close it when the
// session closes.
func (st *Store) Session(id string, ws search.Fence) (*Session, error) {
	if id == "" || filepath.Base(id) != id || id[0] == '.' {
		return nil, fmt.Errorf("checkpoints: bad session id %q", id)
	}
	p := filepath.Join(st.dir, "sessions", id+".jsonl")
	j, err := readJournal(p)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	s := &Session{st: st, id: id, ws: ws, path: p, j: *j, byID: map[string]*cp{}, last: map[string]*State{}}
	s.bg.ctx, s.bg.cancel = context.WithCancel(context.Background())
	for _, c := range j.cps {
		s.byID[c.id] = c
		for _, path := range c.order {
			s.last[path] = c.files[path].after
		}
	}
	st.mu.Lock()
	st.live[s] = struct{}{}
	st.mu.Unlock()
	s.recover(context.Background())
	return s, nil
}

// Sessions returns the ids of the sessions open on the store (Session was called and Close
// was not), sorted: what a daemon holds open, for its tests and its log. An id opened twice
// (which Session's contract forbids) is there twice.
func (st *Store) Sessions() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for s := range st.live {
		out = append(out, s.id)
	}
	slices.Sort(out)
	return out
}

// Close lets the session's blobs be evicted and closes its journal. It stops the session's
// background snapshot and waits for it and for the eviction passes the session started, so
// that when it returns nothing of the session runs any more. Contract: called once the
// session's tools and rewinds ended, before its workspace is closed; safe to call again.
func (s *Session) Close() {
	s.bg.mu.Lock()
	s.bg.closed = true
	s.bg.mu.Unlock()
	s.bg.cancel()
	s.bg.wg.Wait()
	s.st.mu.Lock()
	delete(s.st.live, s)
	s.st.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = nil
}

// goBackground runs f on a goroutine of its own that Close waits for; nothing once the
// session is closed.
func (s *Session) goBackground(f func(ctx context.Context)) {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	if s.bg.closed {
		return
	}
	s.bg.wg.Add(1)
	go func() {
		defer s.bg.wg.Done()
		f(s.bg.ctx)
	}()
}

// hashes returns the blobs the session may still need: its journal's, its stat cache's and
// its last kept snapshot. Contract: called by Enforce with the store's gate held for
// writing (so no snapshot is under way, and snapMu is free or about to be).
func (s *Session) hashes() map[string]bool {
	s.snapMu.Lock()
	s.mu.Lock()
	out := s.j.refs(s.st)
	s.mu.Unlock()
	for _, c := range s.cache {
		out[c.st.Hash] = true
	}
	out[s.manifest] = true
	s.snapMu.Unlock()
	delete(out, "")
	return out
}

// writeLocked appends r to the journal, opened for the write and closed after it (an idle
// session holds no descriptor of it). The line is in the kernel when it returns (no fsync:
// a kill -9 of pid loses nothing; a power loss may).
func (s *Session) writeLocked(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	return errors.Join(werr, f.Close())
}

// Begin opens the checkpoint id for a prompt whose text is prompt (its first 200
// characters are kept); the tools' changes are recorded into it until End.
func (s *Session) Begin(id, prompt string) error {
	return s.begin(id, prompt, "")
}

func (s *Session) begin(id, prompt, safety string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byID[id]; dup {
		return fmt.Errorf("checkpoints: checkpoint %s exists", id)
	}
	r := record{T: "begin", CP: id, Prompt: clip(prompt, 200), Time: time.Now().UTC().Truncate(time.Millisecond), Safety: safety}
	if err := s.writeLocked(r); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	s.j.apply(&r, s.byID)
	s.cur = s.byID[id]
	return nil
}

// clip returns the first n characters of text.
func clip(text string, n int) string {
	i := 0
	for at := range text {
		if i == n {
			return text[:at]
		}
		i++
	}
	return text
}

// End closes the open checkpoint, and starts an eviction pass in the background (Close
// waits for it).
func (s *Session) End() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	s.goBackground(func(context.Context) { s.st.Enforce() })
}

// Warm takes a snapshot in the background when none was taken yet, so that the first bash
// call of the session finds the stat cache full.
func (s *Session) Warm() {
	s.snapMu.Lock()
	warmed := s.warmed
	s.warmed = true
	s.snapMu.Unlock()
	if !warmed {
		s.goBackground(func(ctx context.Context) { s.snapshot(ctx) })
	}
}

// noteLocked records, in checkpoint c, a file's state before a change; nothing when the
// checkpoint has it already.
func (s *Session) noteLocked(c *cp, path string, before State) {
	if c == nil || c.files[path] != nil {
		return
	}
	r := record{T: "before", CP: c.id, Path: path, State: &before}
	if err := s.writeLocked(r); err != nil {
		// Without the line, the change cannot be taken back: say so in the checkpoint.
		c.incomplete = append(c.incomplete, fmt.Sprintf("%s: its state before the change could not be recorded (%v)", path, err))
		return
	}
	s.j.apply(&r, s.byID)
	s.last[path] = nil
	if before.NotKept != "" {
		s.incompleteLocked(c, fmt.Sprintf("%s was not kept: %s", path, before.NotKept))
	}
}

// incompleteLocked records why c cannot be taken back whole.
func (s *Session) incompleteLocked(c *cp, reason string) {
	r := record{T: "incomplete", CP: c.id, Reason: reason}
	_ = s.writeLocked(r)
	c.incomplete = append(c.incomplete, reason)
}

// afterLocked records a file's state after a change recorded in checkpoint c, made by the
// tool named by ("" for a rewind's or an undo's own), and moves the generation on.
func (s *Session) afterLocked(c *cp, path string, after State, by string) {
	if c == nil || c.files[path] == nil {
		return
	}
	r := record{T: "after", CP: c.id, Path: path, State: &after, By: by}
	if s.writeLocked(r) == nil {
		s.j.apply(&r, s.byID)
		st := after
		s.last[path] = &st
		s.gen.Add(1)
	}
}

// BeforeFile keeps the state of the file at path (a real absolute path) before a tool
// changes it. Contract: called by write and edit before they change the file, from the
// tool's goroutine; it never fails the call (what cannot be kept makes the checkpoint
// incomplete). It does nothing when no checkpoint is open, nor for a path outside the
// workspace folders: the tools refuse such a path, and pid never keeps nor restores a file
// outside them (the snapshots do not follow links either).
func (s *Session) BeforeFile(path string) {
	s.mu.Lock()
	c := s.cur
	has := c != nil && c.files[path] != nil
	s.mu.Unlock()
	if c == nil || has {
		return
	}
	if _, _, err := s.ws.At(path); err != nil {
		return
	}
	s.st.gate.RLock()
	defer s.st.gate.RUnlock()
	st := s.stateAt(path, maxToolFileBytes, true)
	s.mu.Lock()
	s.noteLocked(c, path, st)
	s.mu.Unlock()
}

// Writing is BeforeFile for a tool about to change the file at path; the function it
// returns is AfterFile, to call once the tool returned. In between, the snapshots of the
// bash calls of the same batch wait, so that they never see the change half done.
// Contract: the returned function is called exactly once, from any goroutine.
func (s *Session) Writing(path string) (done func()) {
	return s.WritingBy(path, "")
}

// WritingBy is Writing for the tool named tool (changes/list's "by": the session passes
// changes.Changer's name), recorded with the change.
func (s *Session) WritingBy(path, tool string) (done func()) {
	s.writing.RLock()
	s.BeforeFile(path)
	return func() {
		s.afterFile(path, tool)
		s.writing.RUnlock()
	}
}

// AfterFile records the state of the file at path after a tool changed it. Contract:
// called after BeforeFile for the same path, once the tool returned.
func (s *Session) AfterFile(path string) { s.afterFile(path, "") }

// afterFile is AfterFile for the tool named by.
func (s *Session) afterFile(path, by string) {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c == nil {
		return
	}
	st := s.stateAt(path, maxToolFileBytes, false)
	s.mu.Lock()
	s.afterLocked(c, path, st, by)
	s.mu.Unlock()
}

// stateAt returns the state of the file at path, read through the workspace's root; keep
// puts its content in the store (else only its hash is taken). Content larger than limit
// is not kept.
func (s *Session) stateAt(path string, limit int64, keep bool) State {
	root, rel, err := s.ws.At(path)
	if err != nil {
		return State{Kind: "other", NotKept: "outside the workspace folders"}
	}
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Absent
	}
	if err != nil {
		return State{Kind: "other", NotKept: err.Error()}
	}
	return s.stateOf(root, rel, fi, limit, keep)
}

// stateOf returns the state of the file rel under root, whose lstat is fi.
func (s *Session) stateOf(root *os.Root, rel string, fi fs.FileInfo, limit int64, keep bool) State {
	how := hashOnly
	if keep {
		how = keepBounded
	}
	return s.stateKept(root, rel, fi, limit, how)
}

// How stateKept treats a file's content: hashed only, kept within the store's bound, or
// kept past it (a rewind keeps what it is about to replace even when the store is full: a
// rewind that cannot be rewound would lose work, and refusing the rewind would keep the
// agent's changes the person asked to undo).
const (
	hashOnly = iota
	keepBounded
	keepAlways
)

// stateKept is stateOf, keeping the content as how says.
func (s *Session) stateKept(root *os.Root, rel string, fi fs.FileInfo, limit int64, how int) State {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(rel)
		if err != nil {
			return State{Kind: "other", NotKept: err.Error()}
		}
		return State{Kind: "link", Link: target}
	case !fi.Mode().IsRegular():
		return State{Kind: "other"}
	}
	st := State{Kind: "file", Mode: uint32(fi.Mode().Perm()), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if fi.Size() > limit {
		st.NotKept = fmt.Sprintf("larger than %d MiB", limit>>20)
		return st
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if err == nil {
		err = safefile.CheckNotLink(f, rel)
	}
	if err != nil {
		st.NotKept = "unreadable: " + errText(err)
		return st
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	f.Close()
	switch {
	case err != nil:
		st.NotKept = "unreadable: " + errText(err)
		return st
	case int64(len(data)) > limit:
		st.NotKept = fmt.Sprintf("larger than %d MiB", limit>>20)
		return st
	}
	if how != hashOnly {
		h, err := s.st.put(data, how == keepAlways)
		if err != nil {
			st.NotKept = "not saved: " + errText(err)
			return st
		}
		st.Hash = h
	} else {
		st.Hash = hashOf(data)
	}
	return st
}

// errText is err's text without the path os puts in it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
