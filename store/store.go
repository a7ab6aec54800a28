// Package store keeps pid's sessions on disk: one append-only JSONL file per session under
// $XDG_STATE_HOME/pid/sessions/, in a folder per workspace. The first line is a header that
// says how to re-create the session; every later line is an entry (a message, a compaction,
// a model change) with an id and a parent id, so a file holds a tree. docs/sessions.md
// describes the format and its versioning rule.
//
// The package knows files, not sessions: it imports llm for the message type and nothing of
// the loop, the pipeline or the RPC layers. Package session decides what to save and when.
//
// The entry points are Open, which returns a Store (the sessions folder), and the Store's
// Create, OpenSession, Read, Delete and List. Create and OpenSession return a File, which
// holds the session's lock and appends entries, each Append in one write(2).
//
// This file holds the Store: where files live, creating, finding, opening and deleting them.
package store

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
)

// Version is the format version this pid writes and the highest it reads (see
// docs/sessions.md: a file of a higher version is refused, never half read).
const Version = 1

// MaxFileSize caps a session file: a larger one is not read, and an Append that would pass
// it fails. A session that reaches it should be compacted into a new session.
const MaxFileSize = 1 << 30

// maxFileSize is MaxFileSize, lowered by tests.
var maxFileSize int64 = MaxFileSize

// ext ends the name of every session file; lockExt ends its lock file's.
const (
	ext     = ".jsonl"
	lockExt = ".lock"
)

// ErrNotFound is wrapped by the error for a session id that has no file.
var ErrNotFound = errors.New("no such session")

// ErrLocked is matched (errors.Is) by the error for a session another File holds, in this
// process or another; errors.As with a *LockedError gives the holder's process id.
var ErrLocked = errors.New("session is in use")

// ErrNewerVersion is wrapped by the error for a file written in a format version higher
// than Version, by a newer pid.
var ErrNewerVersion = errors.New("session file written by a newer pid")

// ErrNotRegular is wrapped by the error for a session file that is not a regular file (a
// FIFO, a device, a folder), after following links.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a session file over MaxFileSize, and by Append's
// error when the file would pass it.
var ErrTooLarge = errors.New("session file too large")

// ErrClosed is wrapped by the error of File methods called after Close.
var ErrClosed = errors.New("session file closed")

// LockedError is the error for a session whose lock another File holds. It matches
// ErrLocked with errors.Is.
type LockedError struct {
	// ID is the session's id.
	ID string
	// PID is the process id the holder wrote in the lock file: 0 when it was not written
	// yet (the holder is between taking the lock and writing it), os.Getpid() when the
	// holder is another File of this very process.
	PID int
}

// Error says who holds the session and what to do. Pure.
func (e *LockedError) Error() string {
	switch {
	case e.PID == os.Getpid():
		return fmt.Sprintf("session %s is already open in this pid process; use the open session or close it first", e.ID)
	case e.PID > 0:
		return fmt.Sprintf("session %s is open in another pid process (pid %d); close it there, or end that process, and try again", e.ID, e.PID)
	}
	return fmt.Sprintf("session %s is open in another pid process; close it there and try again", e.ID)
}

// Is reports whether target is ErrLocked, so that errors.Is(err, ErrLocked) holds. Pure.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Store is the sessions folder. It is safe for concurrent use; several Stores, in one
// process or several, may share a folder: the lock of each session file keeps its writers
// to one.
type Store struct {
	dir string

	// mu guards the fields below.
	mu sync.Mutex
	// summaries caches List's reading of each file by path, valid while the file's size
	// and modification time are those recorded.
	summaries map[string]cachedSummary
	// reads counts the session files List read (for tests of the cache), bytesRead the
	// bytes it read of them.
	reads     int
	bytesRead int64
}

// Open returns the Store of the sessions folder dir, creating the folder (mode 0700) when
// missing. dir "" means $XDG_STATE_HOME/pid/sessions (~/.local/state/pid/sessions).
//
// Contract: called at startup; it fails when the folder cannot be named (no
// XDG_STATE_HOME nor HOME), created, or is not a folder, with an error saying which.
func Open(dir string) (*Store, error) {
	if dir == "" {
		state, err := xdg.StateDir()
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		dir = filepath.Join(state, "sessions")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: cannot create the sessions folder: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("store: %s is not a folder; move it away so pid can keep sessions there", dir)
	}
	return &Store{dir: dir, summaries: map[string]cachedSummary{}}, nil
}

// Dir returns the sessions folder, absolute. Safe for concurrent use.
func (s *Store) Dir() string { return s.dir }

// WorkspaceFolder returns the name of the folder, under Dir, that holds the sessions of the
// workspace cwd: the cleaned path with separators as "-" and characters other than
// [A-Za-z0-9._-] as "_", its last 48 bytes when longer, then "-" and 8 hex digits of the
// path's SHA-256, so that names are both readable and unique. Pure.
func WorkspaceFolder(cwd string) string {
	clean := filepath.Clean(cwd)
	var b strings.Builder
	for _, r := range strings.Trim(clean, string(filepath.Separator)) {
		switch {
		case r == filepath.Separator:
			b.WriteByte('-')
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 48 {
		name = name[len(name)-48:]
	}
	if name == "" {
		name = "root"
	}
	if name[0] == '.' || name[0] == '-' {
		name = "_" + name[1:]
	}
	sum := sha256.Sum256([]byte(clean))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// validID reports whether id can name a session file: 1 to 64 characters of [0-9a-z_-]
// (NewID makes [0-9a-z]), so that no id from the wire can name a path outside the folder.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// badID is the error for an id validID refuses.
func badID(id string) error {
	return fmt.Errorf("store: %q is not a session id (ids are 1 to 64 characters of 0-9, a-z, _ and -): %w", id, ErrNotFound)
}

// find returns the path of the session file of id: Dir/*/id.jsonl. It fails wrapping
// ErrNotFound when there is none, and when two workspace folders hold that id.
func (s *Store) find(id string) (string, error) {
	if !validID(id) {
		return "", badID(id)
	}
	// id has no glob metacharacters (validID), so the pattern matches it literally.
	matches, err := filepath.Glob(filepath.Join(s.dir, "*", id+ext))
	if err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("store: session %s: %w (it may have been deleted; session/list shows the saved ones)", id, ErrNotFound)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("store: session %s has a file in %d folders (%s); remove all but one", id, len(matches), strings.Join(matches, ", "))
}

// lockPath returns the lock file of a session file.
func lockPath(path string) string { return strings.TrimSuffix(path, ext) + lockExt }

// Create makes a new session file for h in its workspace's folder (created 0700; the file
// is 0600), takes its lock, writes the header line and syncs it (and the folder), and
// returns the open File. h.ID "" gets NewID(); h.CreatedAt zero gets the current time;
// h.Cwd must be absolute. The header must carry no key: a model config with a member named
// like a secret (apiKey, api_key, key, token, authorization, password, secret, in any case)
// is refused.
//
// Contract: safe for concurrent use. On failure nothing is left behind (no file, no lock)
// and the error says why; an id that already has a file is an error.
func (s *Store) Create(h Header) (*File, error) {
	if h.ID == "" {
		h.ID = NewID()
	}
	if !validID(h.ID) {
		return nil, badID(h.ID)
	}
	if !filepath.IsAbs(h.Cwd) {
		return nil, fmt.Errorf("store: the session's cwd %q is not an absolute path", h.Cwd)
	}
	h.Cwd = filepath.Clean(h.Cwd)
	if h.CreatedAt.IsZero() {
		h.CreatedAt = time.Now()
	}
	h.CreatedAt = h.CreatedAt.UTC().Truncate(time.Millisecond)
	line, err := encodeHeader(&h)
	if err != nil {
		return nil, err
	}
	if existing, err := s.find(h.ID); err == nil {
		return nil, fmt.Errorf("store: session %s already has a file (%s)", h.ID, existing)
	}
	folder := filepath.Join(s.dir, WorkspaceFolder(h.Cwd))
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return nil, fmt.Errorf("store: cannot create the workspace's sessions folder: %w", err)
	}
	path := filepath.Join(folder, h.ID+ext)
	lk, err := acquire(lockPath(path), h.ID)
	if err != nil {
		return nil, err
	}
	f, err := safefile.OpenNoFollow(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		lk.release()
		return nil, fmt.Errorf("store: cannot create the session file: %w", err)
	}
	fail := func(err error) (*File, error) {
		f.Close()
		os.Remove(path)
		lk.release()
		return nil, fmt.Errorf("store: writing the header of %s: %w", path, err)
	}
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	syncDir(folder)
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	return &File{
		id: h.ID, path: path, lock: lk, f: f, info: fi, size: int64(len(line)),
		ids: map[string]bool{}, sums: map[string]branchSum{},
	}, nil
}

// syncDir fsyncs a folder, so that a file just created in it survives a power loss. A
// failure is ignored: the file itself is synced, and some file systems refuse this.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// OpenSession finds the file of session id, takes its lock and reads it, returning the File
// (to append to) and what it holds. A torn last line (a crash while writing) is skipped,
// reported in Loaded.Problems, and cut off the file, so the next Append starts a clean line.
//
// Contract: safe for concurrent use. It fails wrapping ErrNotFound for an unknown id,
// matching ErrLocked (with a *LockedError) when another File holds the session (in this
// process or another; a lock whose holder died is free, see docs/sessions.md), wrapping
// ErrNewerVersion, ErrNotRegular or ErrTooLarge for such files, and naming the file when
// its header cannot be read. On failure the lock is not held.
func (s *Store) OpenSession(id string) (*File, *Loaded, error) {
	path, err := s.find(id)
	if err != nil {
		return nil, nil, err
	}
	lk, err := acquire(lockPath(path), id)
	if err != nil {
		return nil, nil, err
	}
	f, fi, err := openChecked(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		lk.release()
		return nil, nil, err
	}
	p, size, err := parseFrom(path, id, f, fi.Size(), true)
	if err != nil {
		f.Close()
		lk.release()
		return nil, nil, err
	}
	if p.tornAt >= 0 {
		// The lock is held, so no other writer is mid-line: the tail is a crash's leftover.
		if err := f.Truncate(int64(p.tornAt)); err != nil {
			f.Close()
			lk.release()
			return nil, nil, fmt.Errorf("store: cannot cut the torn last line off %s: %w", path, err)
		}
		_ = f.Sync()
		p.loaded.Problems[len(p.loaded.Problems)-1] += " and cut off the file"
		size = int64(p.tornAt)
	}
	file := &File{id: id, path: path, lock: lk, f: f, info: fi, size: size, ids: p.ids, sums: p.sums, leaf: p.leaf}
	if n := len(p.loaded.Entries); n > 0 && p.loaded.Entries[n-1].Kind == KindUnsaved && p.loaded.Entries[n-1].ID == p.leaf {
		file.marked = true
	}
	return file, p.loaded, nil
}

// Read reads session id without taking its lock: for fork and for looking at a session
// another process holds. A last line being written at that moment reads as torn.
//
// Contract: safe for concurrent use; it never writes. Errors as OpenSession's, without
// ErrLocked.
func (s *Store) Read(id string) (*Loaded, error) {
	path, err := s.find(id)
	if err != nil {
		return nil, err
	}
	f, fi, err := openChecked(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, _, err := parseFrom(path, id, f, fi.Size(), true)
	if err != nil {
		return nil, err
	}
	return p.loaded, nil
}

// openChecked opens path with flag (plus non-blocking, so that a FIFO put in a session
// file's place cannot hang pid) and checks that it is a regular file of at most
// MaxFileSize, without reading it.
func openChecked(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("store: %s: %w", path, ErrNotFound)
		}
		if errors.Is(err, syscall.EISDIR) {
			return nil, nil, fmt.Errorf("store: %s: %w (a folder); remove it, it cannot be a session", path, ErrNotRegular)
		}
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	fi, err := checkOpen(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkOpen checks that an open file is a regular file of at most MaxFileSize and returns
// what it says of itself.
func checkOpen(f *os.File, path string) (os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: %s: %w (%s); remove it, it cannot be a session", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > maxFileSize {
		return nil, fmt.Errorf("store: %s: %w: %d bytes, more than the %d pid reads; move it out of the sessions folder", path, ErrTooLarge, fi.Size(), maxFileSize)
	}
	return fi, nil
}

// kind names a file mode's type for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// Delete removes the file of session id and its lock file. It takes the lock first, so a
// session open in a File (of this process or another) is refused with an error matching
// ErrLocked; an unknown id wraps ErrNotFound.
//
// Contract: safe for concurrent use. On failure the file is left as it was.
func (s *Store) Delete(id string) error {
	path, err := s.find(id)
	if err != nil {
		return err
	}
	lk, err := acquire(lockPath(path), id)
	if err != nil {
		return err
	}
	defer lk.release() // removes the lock file
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("store: deleting session %s: %w", id, err)
	}
	s.mu.Lock()
	delete(s.summaries, path)
	s.mu.Unlock()
	return nil
}

// maxHeaderLine caps the header line ReadHeader reads (a scripted model's turns live there).
const maxHeaderLine = 16 << 20

// ReadHeader reads only a session's header line: which folder it belongs to, how to
// re-create it, without reading its entries (for a face that must pick the host before
// loading). Errors as Read's.
//
// Contract: safe for concurrent use; it takes no lock and changes nothing.
func (s *Store) ReadHeader(id string) (Header, error) {
	path, err := s.find(id)
	if err != nil {
		return Header{}, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Header{}, fmt.Errorf("store: %s: %w", path, ErrNotFound)
		}
		return Header{}, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Header{}, fmt.Errorf("store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Header{}, fmt.Errorf("store: %s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxHeaderLine), 64<<10).ReadBytes('\n')
	if err != nil {
		line = nil // no complete header line: parse says so
	}
	p, err := parse(path, id, line, false)
	if err != nil {
		return Header{}, err
	}
	return p.loaded.Header, nil
}
