// This file lists the saved sessions for session/list: a summary of each file (title, times,
// message count), cached by file size and modification time so that listing again reads
// only the files that changed.

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/llm"
)

// Summary describes one saved session, for session/list.
type Summary struct {
	ID, Cwd, Title       string
	ParentSessionID      string // a subagent's parent session
	CreatedAt, UpdatedAt time.Time
	MessageCount         int // entries of kind message on the current branch
}

// TitleMax is the most characters (runes) of a Summary's Title.
const TitleMax = 80

// cachedSummary is List's reading of one file.
type cachedSummary struct {
	size    int64
	modTime time.Time
	sum     Summary
	err     error // the file could not be listed; cached too, so it is not re-read
}

// List returns a summary of every saved session, newest UpdatedAt first (ties: newest id
// first), of the workspace cwd only when cwd is not "" (paths compared cleaned). Paging is
// the caller's. Files that cannot be read are left out (ListWithProblems says which).
//
// Contract: safe for concurrent use; it never writes. It reads the header and entries of
// each file whose size or modification time changed since the Store last listed it, and
// only stats the others. It fails only when the sessions folder cannot be read.
func (s *Store) List(cwd string) ([]Summary, error) {
	sums, _, err := s.ListWithProblems(cwd)
	return sums, err
}

// ListWithProblems is List, also returning one sentence for each session file it left out
// (not a regular file, unreadable header, newer format version), naming the file.
//
// Contract: as List's.
func (s *Store) ListWithProblems(cwd string) ([]Summary, []string, error) {
	if cwd != "" {
		cwd = filepath.Clean(cwd)
	}
	folders, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("store: cannot list sessions: %w", err)
	}
	var sums []Summary
	var problems []string
	seen := map[string]bool{}
	for _, folder := range folders {
		if !folder.IsDir() {
			continue
		}
		dir := filepath.Join(s.dir, folder.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot be read: %v", dir, err))
			continue
		}
		for _, file := range files {
			id, ok := strings.CutSuffix(file.Name(), ext)
			if !ok || !validID(id) {
				continue
			}
			path := filepath.Join(dir, file.Name())
			seen[path] = true
			sum, err := s.summary(path, id)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if cwd == "" || filepath.Clean(sum.Cwd) == cwd {
				sums = append(sums, sum)
			}
		}
	}
	s.mu.Lock()
	for path := range s.summaries {
		if !seen[path] {
			delete(s.summaries, path)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(sums, func(a, b Summary) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return sums, problems, nil
}

// summary returns the summary of the session file at path, from the cache when the file's
// size and modification time are unchanged.
func (s *Store) summary(path, id string) (Summary, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Summary{}, fmt.Errorf("store: %w", err)
	}
	s.mu.Lock()
	c, ok := s.summaries[path]
	s.mu.Unlock()
	if ok && c.size == fi.Size() && c.modTime.Equal(fi.ModTime()) {
		return c.sum, c.err
	}
	c = cachedSummary{size: fi.Size(), modTime: fi.ModTime()}
	c.sum, c.err = readSummary(path, id)
	s.mu.Lock()
	s.summaries[path] = c
	s.reads++
	s.mu.Unlock()
	return c.sum, c.err
}

// readSummary reads a session file and summarizes it, decoding only the message that gives
// the title.
func readSummary(path, id string) (Summary, error) {
	f, data, err := openRead(path, os.O_RDONLY)
	if err != nil {
		return Summary{}, err
	}
	f.Close()
	p, err := parse(path, id, data, false)
	if err != nil {
		return Summary{}, err
	}
	l := p.loaded
	sum := Summary{ID: id, Cwd: l.Header.Cwd, ParentSessionID: l.Header.ParentSessionID, CreatedAt: l.Header.CreatedAt, UpdatedAt: l.Header.CreatedAt}
	if n := len(l.Entries); n > 0 && !l.Entries[n-1].Timestamp.IsZero() {
		sum.UpdatedAt = l.Entries[n-1].Timestamp
	}
	at := make(map[string]int, len(l.Entries))
	for i := range l.Entries {
		at[l.Entries[i].ID] = i
	}
	titled := false
	for _, e := range l.Branch {
		if e.Kind != KindMessage {
			continue
		}
		sum.MessageCount++
		if titled {
			continue
		}
		var m llm.Message
		if m.UnmarshalJSON([]byte(p.raw[at[e.ID]])) == nil && m.Role == llm.RoleUser {
			sum.Title, titled = Title(m.Text()), true
		}
	}
	return sum, nil
}

// Title returns text as a session title: whitespace runs collapsed to one space, trimmed, and
// cut to TitleMax runes. Pure.
func Title(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= TitleMax {
		return t
	}
	n := 0
	for i := range t {
		if n == TitleMax {
			return t[:i]
		}
		n++
	}
	return t
}
