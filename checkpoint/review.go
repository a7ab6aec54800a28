// This file holds what the review of a prompt's changes (changes/list, changes/undo,
// changes/keep: package changes cuts and undoes the hunks) needs from the checkpoints: each
// file's state before a checkpoint with the tools that changed it (Befores), the file as it
// is now (Now), a counter of the changes recorded (Generation), and an undo of some hunks of
// one file recorded in a safety checkpoint of its own (Undo).

package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
)

// Generation returns a number that moves on each time a change of a file is recorded (a
// tool's, a rewind's, an undo's): the session compares it before and after a tool call to
// know whether the call changed files, without listing them. Safe for concurrent use.
func (s *Session) Generation() uint64 { return s.gen.Load() }

// Before is one file a checkpoint's run (or a run after it) changed, as it was before.
type Before struct {
	Path string
	// Kind is the file's kind before: "none", "file", "link" or "other".
	Kind string
	// Data is a regular file's content before (nil when Err is set, or Kind is not "file"),
	// Mode its permission bits, Link a link's target.
	Data []byte
	Mode fs.FileMode
	Link string
	// By names the tools that changed it in the checkpoint and the runs after it (not
	// counting rewinds' and undos' own), each once.
	By []string
	// Err says why a regular file's content before is not there (it was not kept, or it
	// was evicted since).
	Err error
}

// Befores returns, for every file the checkpoint id's run and the runs after it changed
// (the files checkpoints/diff and a rewind take), its state before that run, in the order
// the files were first changed. It fails with ErrUnknown for an id the session does not
// have. Safe for concurrent use; it reads the store, so not on a goroutine that must not
// block.
func (s *Session) Befores(id string) ([]Before, error) {
	s.mu.Lock()
	targets, err := s.targetsLocked(id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	out := make([]Before, 0, len(targets))
	states := make([]State, 0, len(targets))
	k := slices.IndexFunc(s.j.cps, func(c *cp) bool { return c.id == id })
	for _, t := range targets {
		b := Before{Path: t.path, Kind: t.before.Kind, Mode: fs.FileMode(t.before.Mode), Link: t.before.Link, By: []string{}}
		for _, c := range s.j.cps[k:] {
			if f := c.files[t.path]; f != nil && c.safety == "" {
				for _, n := range f.by {
					if !slices.Contains(b.By, n) {
						b.By = append(b.By, n)
					}
				}
			}
		}
		out = append(out, b)
		states = append(states, t.before)
	}
	evicted := s.j.evicted
	s.mu.Unlock()
	for i := range out {
		st := states[i]
		if st.Kind != "file" {
			continue
		}
		switch {
		case st.Hash == "":
			out[i].Err = errors.New(st.NotKept)
		default:
			data, err := s.st.get(st.Hash)
			if err != nil && evicted {
				err = errEvicted
			}
			out[i].Data, out[i].Err = data, err
		}
		if out[i].Data == nil && out[i].Err == nil {
			out[i].Data = []byte{}
		}
	}
	return out, nil
}

// Current is a file as it is now.
type Current struct {
	// Kind is "none", "file", "link" or "other".
	Kind string
	Data []byte // a regular file's content (non-nil, maybe empty)
	Mode fs.FileMode
	Link string
	// Info is the file's lstat (nil when there is none): what tells a later read that it
	// did not change.
	Info fs.FileInfo
}

// Now returns the file at path (an absolute path inside the workspace folders) as it is now,
// read through the workspace's root without following a link. A file larger than pid's
// bound for a tool's file (64 MiB) is an error, as is a path outside the folders.
func (s *Session) Now(path string) (Current, error) {
	root, rel, err := s.ws.At(path)
	if err != nil {
		return Current{}, err
	}
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Current{Kind: "none"}, nil
	}
	if err != nil {
		return Current{}, err
	}
	c := Current{Kind: "other", Mode: fi.Mode().Perm(), Info: fi}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		c.Kind = "link"
		c.Link, err = root.Readlink(rel)
		return c, err
	case !fi.Mode().IsRegular():
		return c, nil
	case fi.Size() > maxToolFileBytes:
		return c, fmt.Errorf("larger than %d MiB", maxToolFileBytes>>20)
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if err == nil {
		err = safefile.CheckNotLink(f, rel)
	}
	if err != nil {
		return c, errors.New(errText(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxToolFileBytes+1))
	if err != nil {
		return c, errors.New(errText(err))
	}
	c.Kind, c.Data = "file", data
	return c, nil
}

// UndoSpec is what an undo does to one file (package changes' UndoResult, its writing part).
type UndoSpec struct {
	// Write gives the file the content Data (Create: it does not exist now).
	Write, Create bool
	Data          []byte
	// Remove removes the file.
	Remove bool
	// Mode is the permission bits to give the file; 0 keeps them (0644 for a file made).
	Mode fs.FileMode
}

// ChangedDuring is why an undo left a file that changed between the read its hunks were
// computed from and the write.
const ChangedDuring = "it changed during the undo (list the changes again)"

// Undo opens the safety checkpoint safetyID (Safety: target, so it is never the default of
// changes/list) and does do to the file at path, keeping what the file is now in it first,
// so that session/rewind to safetyID takes the undo back. from is the file's content the
// undo was computed from (nil: there was no file); when the file is no longer that, nothing
// is done and the reason is ChangedDuring. It returns a reason, and opens no checkpoint,
// when the file is left as it is: outside the workspace folders, a symbolic link on its
// way, the file now a symbolic or hard link or not a regular file, its current content
// not kept. The open checkpoint (a running prompt's) stays the open one. Text goes through
// write when set, as a rewind's.
//
// Contract: called by the session, never for a path a running tool is changing (the
// session refuses that first); concurrent with a prompt's tools otherwise.
func (s *Session) Undo(safetyID, target, path string, from []byte, do UndoSpec, write Writer) (reason string, err error) {
	s.writing.RLock() // a bash snapshot never sees the undo half done
	defer s.writing.RUnlock()
	c := s.cp(target)
	if c == nil {
		return "", fmt.Errorf("%w %q", ErrUnknown, target)
	}
	root, rel, aterr := s.ws.At(path)
	if aterr != nil {
		return "it is outside the workspace folders", nil
	}
	if link := linkOnTheWay(root, rel); link != "" {
		return "a folder on its path (" + link + ") is now a symbolic link", nil
	}
	fi, lerr := root.Lstat(rel)
	exists := lerr == nil
	switch {
	case lerr != nil && !errors.Is(lerr, fs.ErrNotExist):
		return "it cannot be looked at: " + errText(lerr), nil
	case exists && fi.Mode()&fs.ModeSymlink != 0:
		return "it is now a symbolic link", nil
	case exists && !fi.Mode().IsRegular():
		return "it is not a regular file", nil
	case exists && hardLinked(fi):
		return "it is now a hard link (the other names would change too)", nil
	case exists != (from != nil):
		return ChangedDuring, nil
	}
	s.st.gate.RLock() // from the put to the journal line
	cur := Absent
	if exists {
		cur = s.keepCurrent(root, rel, fi)
		if cur.Hash == "" {
			s.st.gate.RUnlock()
			return "its current content could not be kept first (" + cur.NotKept + ")", nil
		}
		if cur.Hash != hashOf(from) {
			s.st.gate.RUnlock()
			return ChangedDuring, nil
		}
	}
	s.mu.Lock()
	if _, dup := s.byID[safetyID]; dup {
		s.mu.Unlock()
		s.st.gate.RUnlock()
		return "", fmt.Errorf("checkpoints: checkpoint %s exists", safetyID)
	}
	r := record{T: "begin", CP: safetyID, Prompt: clip("Before undoing changes of: "+c.prompt, 200), Time: time.Now().UTC().Truncate(time.Millisecond), Safety: target}
	if err := s.writeLocked(r); err != nil {
		s.mu.Unlock()
		s.st.gate.RUnlock()
		return "", fmt.Errorf("checkpoints: %w", err)
	}
	s.j.apply(&r, s.byID)
	safety := s.byID[safetyID]
	s.noteLocked(safety, path, cur)
	s.mu.Unlock()
	s.st.gate.RUnlock()

	switch {
	case do.Remove:
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			reason = "it could not be removed: " + errText(err)
		}
	case do.Write:
		perm := do.Mode
		if perm == 0 && exists {
			perm = fi.Mode().Perm()
		}
		if perm == 0 {
			perm = 0o644
		}
		if err := writeFile(root, rel, path, do.Data, perm, exists, write); err != nil {
			reason = "it could not be written: " + errText(err)
		}
	case do.Mode != 0:
		if err := root.Chmod(rel, do.Mode); err != nil {
			reason = "its mode could not be changed: " + errText(err)
		}
	}
	if after, _, _, err := s.current(path); err == nil {
		s.mu.Lock()
		s.afterLocked(safety, path, after, "")
		s.mu.Unlock()
	}
	return reason, nil
}
