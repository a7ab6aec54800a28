// This file lists the saved sessions for session/list: a summary of each file (title, times,
// message count), cached by file size and modification time so that listing again reads
// only the files that changed.

package store

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pid-agent/pid/llm"
	"github.com/tidwall/gjson"
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
// Contract: safe for concurrent use; it never writes. Of each file whose size or
// modification time changed since the Store last listed it, it reads the header, the last
// line and the line of the title (readSummary; an older file without the branch summaries
// is read through once, keeping only ids), and only stats the others. It fails only when
// the sessions folder cannot be read.
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
	var n int64
	c.sum, n, c.err = readSummary(path, id)
	s.mu.Lock()
	s.summaries[path] = c
	s.reads++
	s.bytesRead += n
	s.mu.Unlock()
	return c.sum, c.err
}

// readSummary summarizes the session file at path, and says how many bytes it read. It
// reads the header, the last complete line and, for the title, the line of the branch's
// first user message: every line this pid writes ends with its branch's summary (branchSum,
// format.go). A file whose last line has none (written by an older pid, or damaged there)
// is read through once instead, keeping only each entry's id, parent and branch
// (parseLean): never the whole file in memory.
func readSummary(path, id string) (Summary, int64, error) {
	f, fi, err := openChecked(path, os.O_RDONLY)
	if err != nil {
		return Summary{}, 0, err
	}
	defer f.Close()
	r := &countingReaderAt{r: f}
	size := fi.Size()
	sum, ok, err := summaryFromTail(r, path, id, size)
	if err != nil {
		return Summary{}, r.n, err
	}
	if !ok {
		p, _, err := parseLean(path, id, io.NewSectionReader(r, 0, size), size)
		if err != nil {
			return Summary{}, r.n, err
		}
		sum = summaryOf(p.loaded.Header, p.lastTime, p.sums[p.leaf])
		if b := p.sums[p.leaf]; b.FirstUser != "" {
			sum.Title, _ = titleAt(r, size, b.FirstUser, b.FirstAt)
		}
		return sum, r.n, nil
	}
	return sum, r.n, nil
}

// summaryOf is a file's summary but its title: h its header, last the timestamp of its
// last entry (zero when none), b its branch.
func summaryOf(h Header, last time.Time, b branchSum) Summary {
	sum := Summary{ID: h.ID, Cwd: h.Cwd, ParentSessionID: h.ParentSessionID, CreatedAt: h.CreatedAt, UpdatedAt: h.CreatedAt, MessageCount: b.Messages}
	if !last.IsZero() {
		sum.UpdatedAt = last
	}
	return sum
}

// tailChunk is how much of a file's end summaryFromTail reads at a time, backwards.
const tailChunk = 16 << 10

// summaryFromTail summarizes the session file r of size bytes from its header and its last
// complete line (a torn last line is skipped, as loading skips it). ok is false when that
// line carries no readable "branch" (the caller then reads the whole file); err is set only
// for a header that cannot be used, as loading fails for it.
func summaryFromTail(r io.ReaderAt, path, id string, size int64) (Summary, bool, error) {
	header, err := bufio.NewReaderSize(io.NewSectionReader(r, 0, min(size, maxHeaderLine)), 4<<10).ReadBytes('\n')
	if err != nil {
		return Summary{}, false, noHeader(path)
	}
	ps, err := newParser(path, id, header[:len(header)-1], false, false)
	if err != nil {
		return Summary{}, false, err
	}
	h := ps.p.loaded.Header
	from := int64(len(header))
	if size == from {
		return summaryOf(h, time.Time{}, branchSum{}), true, nil
	}
	line, ok := lastLine(r, from, size)
	if !ok {
		return Summary{}, false, nil
	}
	e := gjson.ParseBytes(line)
	b := e.Get("branch")
	ts, terr := time.Parse(time.RFC3339Nano, e.Get("timestamp").Str)
	if !gjson.ValidBytes(line) || !knownKind(e.Get("type").Str) || !validID(e.Get("id").Str) || terr != nil || !b.IsObject() || b.Get("messages").Type != gjson.Number {
		return Summary{}, false, nil
	}
	bs := branchSum{Messages: int(b.Get("messages").Int()), FirstUser: b.Get("firstUser.id").Str, FirstAt: b.Get("firstUser.offset").Int()}
	sum := summaryOf(h, ts, bs)
	if bs.FirstUser != "" {
		if sum.Title, ok = titleAt(r, size, bs.FirstUser, bs.FirstAt); !ok {
			return Summary{}, false, nil // the file does not hold what its last line says
		}
	}
	return sum, true, nil
}

// knownKind reports whether kind is an entry kind this pid reads.
func knownKind(kind string) bool {
	switch kind {
	case KindMessage, KindCompaction, KindModel, KindMode, KindUnsaved, KindCheckpoint, KindRewind, KindReview:
		return true
	}
	return false
}

// lastLine returns the last complete line of r's bytes [from, size) (without its newline):
// the bytes after the last newline are a torn line, skipped. It reads backwards, a chunk at a
// time, only as far as that line's start; ok is false when there is no complete line.
func lastLine(r io.ReaderAt, from, size int64) ([]byte, bool) {
	var tail []byte // the bytes [pos, size)
	pos := size
	end := -1 // in tail: the index of the last newline
	for pos > from {
		n := min(int64(tailChunk), pos-from)
		chunk := make([]byte, n, n+int64(len(tail)))
		if _, err := r.ReadAt(chunk, pos-n); err != nil {
			return nil, false
		}
		pos -= n
		if end >= 0 {
			end += int(n)
		}
		tail = append(chunk, tail...)
		if end < 0 {
			end = bytes.LastIndexByte(tail, '\n')
			if end < 0 {
				continue
			}
		}
		if start := bytes.LastIndexByte(tail[:end], '\n'); start >= 0 {
			return tail[start+1 : end], true
		}
	}
	if end < 0 {
		return nil, false
	}
	return tail[:end], true
}

// titleAt returns the title of the user message entry id, whose line starts at offset at
// of r (of size bytes); ok is false when no such entry starts there.
func titleAt(r io.ReaderAt, size int64, id string, at int64) (string, bool) {
	if at <= 0 || at >= size {
		return "", false
	}
	var before [1]byte
	if _, err := r.ReadAt(before[:], at-1); err != nil || before[0] != '\n' {
		return "", false
	}
	line, err := bufio.NewReaderSize(io.NewSectionReader(r, at, size-at), 16<<10).ReadBytes('\n')
	if err != nil {
		return "", false
	}
	e := gjson.ParseBytes(line)
	if e.Get("type").Str != KindMessage || e.Get("id").Str != id {
		return "", false
	}
	var m llm.Message
	if m.UnmarshalJSON([]byte(e.Get("message").Raw)) != nil || m.Role != llm.RoleUser {
		return "", false
	}
	return Title(m.Text()), true
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
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
