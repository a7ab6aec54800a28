// This file holds the Store of remembered "always" answers: a JSON file under the XDG state
// folder, written atomically, listed and revoked by id; or, for a session whose answers
// cannot be kept on disk, the same in memory.

package permissions

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/internal/safefile"
)

// Remembered is one remembered answer, in the shape of permissions/list.
type Remembered struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Path is the gjson path of the argument Pattern looks at; "" means the tool's default
	// argument. An extension of the protocol's shape, written only when set.
	Path string `json:"path,omitempty"`
	// Pattern limits the answer to matching calls, with a rule's semantics; "" covers every
	// call of the tool.
	Pattern  string   `json:"pattern,omitempty"`
	Decision Decision `json:"decision"`
	// Scope is where the answer applies: "workspace:" followed by the absolute, cleaned
	// workspace root.
	Scope string `json:"scope"`
}

// ListResult is the result of permissions/list.
type ListResult struct {
	Permissions []Remembered `json:"permissions"`
}

// ErrUnknownID is returned (wrapped) by Revoke for an id the store does not hold.
var ErrUnknownID = errors.New("no remembered permission with this id")

// storeFile is the file's format.
type storeFile struct {
	Version     int          `json:"version"`
	Permissions []Remembered `json:"permissions"`
}

// Store holds remembered answers and persists them to one JSON file. Several pid processes
// may share the file: every change re-reads it first, and lookups re-read it when its size or
// modification time changed, so a change made by another process is seen; two processes
// changing it at the same instant can still lose one change (there is no file lock).
type Store struct {
	path string // "" for a memory store

	// mu guards the fields below and serializes writes to the file.
	mu      sync.Mutex
	entries []Remembered
	modTime time.Time // of the file when last read or written
	size    int64
}

// DefaultStorePath returns $XDG_STATE_HOME/pid/permissions.json, or
// ~/.local/state/pid/permissions.json when XDG_STATE_HOME is unset or not absolute. It reads
// the environment only; it fails when neither XDG_STATE_HOME nor the home folder is known.
func DefaultStorePath() (string, error) {
	dir, err := stateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "pid", "permissions.json"), nil
}

func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("permissions: no state folder: %w", err)
	}
	return filepath.Join(home, ".local", "state"), nil
}

// OpenStore opens the store at path ("" means DefaultStorePath). A missing file is an empty
// store (the file is created by the first change). A file that cannot be read or parsed is an
// error: the daemon should report it and run without remembered answers rather than
// overwrite the user's file.
//
// Contract: called once at startup; the Store it returns is safe for concurrent use.
func OpenStore(path string) (*Store, error) {
	if path == "" {
		var err error
		if path, err = DefaultStorePath(); err != nil {
			return nil, err
		}
	}
	s := &Store{path: path}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(true); err != nil {
		return nil, err
	}
	return s, nil
}

// NewMemoryStore returns a store that keeps its answers in memory only: what a session uses
// when the file store cannot be written, so that an "always" answer is kept exactly as
// narrow as it was given (or not at all, when it cannot be represented), never wider.
//
// Contract: the Store is safe for concurrent use; Remember fails only for an entry that
// is not valid (a pattern that is not a valid glob, say), and then keeps nothing.
func NewMemoryStore() *Store { return &Store{} }

// Path returns the store's file ("" for a memory store). Safe for concurrent use.
func (s *Store) Path() string { return s.path }

// maxStoreFile caps permissions.json.
const maxStoreFile = 16 << 20

// load reads the file into s.entries when it changed since the last read (or always, when
// force is set). A missing file is an empty store. Caller holds s.mu.
func (s *Store) load(force bool) error {
	if s.path == "" {
		return nil
	}
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.entries, s.modTime, s.size = nil, time.Time{}, 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("permissions: %w", err)
	}
	if !force && fi.ModTime().Equal(s.modTime) && fi.Size() == s.size {
		return nil
	}
	data, err := safefile.Read(s.path, maxStoreFile)
	if err != nil {
		return fmt.Errorf("permissions: %w", err)
	}
	var f storeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("permissions: %s is not a valid permissions store: %v", s.path, err)
	}
	for i, e := range f.Permissions {
		if err := e.check(); err != nil {
			return fmt.Errorf("permissions: %s: entry %d: %v", s.path, i, err)
		}
	}
	s.entries, s.modTime, s.size = f.Permissions, fi.ModTime(), fi.Size()
	return nil
}

// check reports what is wrong with an entry.
func (e Remembered) check() error {
	switch {
	case e.ID == "":
		return errors.New("id is empty")
	case e.Tool == "":
		return errors.New("tool is empty")
	case e.Decision != Allow && e.Decision != Deny:
		return fmt.Errorf("decision must be \"allow\" or \"deny\", not %q", e.Decision)
	case !strings.HasPrefix(e.Scope, scopePrefix) || !filepath.IsAbs(strings.TrimPrefix(e.Scope, scopePrefix)):
		return fmt.Errorf("scope must be \"workspace:/absolute/root\", not %q", e.Scope)
	}
	if e.Pattern != "" {
		return Rule{Path: e.Path, Pattern: e.Pattern, Decision: e.Decision}.check(e.Tool)
	}
	return nil
}

const scopePrefix = "workspace:"

// Scope returns the scope string of a workspace root: "workspace:" and the cleaned root.
// Pure: safe for concurrent use.
func Scope(workspace string) string { return scopePrefix + filepath.Clean(workspace) }

// save writes entries to the file atomically (a temporary file in the same folder, synced,
// then renamed over it), creating the folder with mode 0700; the file has mode 0600. Caller
// holds s.mu.
func (s *Store) save(entries []Remembered) error {
	if s.path == "" {
		s.entries = entries
		return nil
	}
	data, err := json.MarshalIndent(storeFile{Version: 1, Permissions: nonNil(entries)}, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteAtomic(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("permissions: writing %s: %w", s.path, err)
	}
	s.entries = entries
	if fi, err := os.Stat(s.path); err == nil {
		s.modTime, s.size = fi.ModTime(), fi.Size()
	}
	return nil
}

func nonNil(e []Remembered) []Remembered {
	if e == nil {
		return []Remembered{}
	}
	return e
}

// Remember records an "always" answer for a tool in a workspace (an absolute root), limited
// to calls whose argument (argPath, "" for the tool's default) matches pattern when pattern
// is set (see SuggestScope). An entry with the same tool, argument, pattern and scope is
// updated in place (it keeps its id). decision must be Allow or Deny.
//
// Contract: safe for concurrent use; it writes the file before returning. On failure the
// store and the file are unchanged and the error says why.
func (s *Store) Remember(workspace, tool, argPath, pattern string, decision Decision) (Remembered, error) {
	if !filepath.IsAbs(workspace) {
		return Remembered{}, fmt.Errorf("permissions: workspace root %q is not an absolute path", workspace)
	}
	e := Remembered{ID: "pending", Tool: tool, Path: argPath, Pattern: pattern, Decision: decision, Scope: Scope(workspace)}
	if err := e.check(); err != nil {
		return Remembered{}, fmt.Errorf("permissions: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(false); err != nil {
		return Remembered{}, err
	}
	entries := slices.Clone(s.entries)
	for i, old := range entries {
		if old.Tool == tool && old.Path == argPath && old.Pattern == pattern && old.Scope == e.Scope {
			e.ID = old.ID
			entries[i] = e
			return e, s.save(entries)
		}
	}
	id, err := s.newID()
	if err != nil {
		return Remembered{}, err
	}
	e.ID = id
	return e, s.save(append(entries, e))
}

// newID returns a random 12-hex-digit id not used by any entry. Caller holds s.mu.
func (s *Store) newID() (string, error) {
	for {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("permissions: %w", err)
		}
		id := hex.EncodeToString(b[:])
		if !slices.ContainsFunc(s.entries, func(e Remembered) bool { return e.ID == id }) {
			return id, nil
		}
	}
}

// List returns every remembered answer, of every workspace, in the order they were first
// remembered: the result of permissions/list.
//
// Contract: safe for concurrent use; it re-reads the file if another process changed it, and
// returns an error only when that file cannot be read.
func (s *Store) List() (ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(false); err != nil {
		return ListResult{Permissions: nonNil(slices.Clone(s.entries))}, err
	}
	return ListResult{Permissions: nonNil(slices.Clone(s.entries))}, nil
}

// Revoke forgets the answer with this id (permissions/revoke). An unknown id is an error
// wrapping ErrUnknownID.
//
// Contract: safe for concurrent use; it writes the file before returning. On failure the
// store and the file are unchanged.
func (s *Store) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(false); err != nil {
		return err
	}
	i := slices.IndexFunc(s.entries, func(e Remembered) bool { return e.ID == id })
	if i < 0 {
		return fmt.Errorf("permissions: %w: %q", ErrUnknownID, id)
	}
	return s.save(slices.Delete(slices.Clone(s.entries), i, i+1))
}

// Lookup returns the remembered answer that applies to a call in a workspace root, if any.
// A remembered deny wins over a remembered allow when both apply; otherwise the first
// remembered applies. An entry with a pattern applies as a rule with that pattern would (an
// allow never matches a command with shell metacharacters).
//
// Contract: safe for concurrent use; it stats the file and re-reads it when another process
// changed it (keeping what it had if the new content is broken); it never writes.
func (s *Store) Lookup(workspace string, c Call) (Remembered, bool) {
	if s == nil || workspace == "" {
		return Remembered{}, false
	}
	scope := Scope(workspace)
	s.mu.Lock()
	_ = s.load(false) // a broken file keeps the entries read before
	entries := s.entries
	s.mu.Unlock()
	var found *Remembered
	for i := range entries {
		e := &entries[i]
		if e.Scope != scope || e.Tool != c.Tool {
			continue
		}
		if e.Pattern != "" && !(Rule{Path: e.Path, Pattern: e.Pattern, Decision: e.Decision}).matches(c) {
			continue
		}
		if e.Decision == Deny {
			return *e, true
		}
		if found == nil {
			found = e
		}
	}
	if found == nil {
		return Remembered{}, false
	}
	return *found, true
}
