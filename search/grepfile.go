// This file searches one file for grep: it reads the file in large chunks into a reused
// buffer and hands whole runs of lines to the matcher (grepmatch.go), numbering lines only
// around matches; it tells binary files (a NUL byte) from text, transcodes UTF-16 with a
// byte order mark, and bounds the memory a long line can take.

package search

import (
	"bytes"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pid-agent/pid/internal/textcut"
)

// The limits of a file's search.
const (
	MaxLineBytes = 500 // a matching line is shown cut to this
	// MaxSearchedLineBytes is how much of a line is searched: the rest of a longer line is
	// not searched, and the result says so (FileMatches.LongLines).
	MaxSearchedLineBytes = 16 << 20
	// MaxUTF16Bytes is the largest UTF-16 file (with a byte order mark) searched, transcoded;
	// a larger one is skipped as binary.
	MaxUTF16Bytes = 16 << 20
)

// grepChunk is the size of the buffers files are read in; a longer line grows its buffer,
// up to MaxSearchedLineBytes.
const grepChunk = 256 << 10

// grepBufs holds the grepChunk-sized buffers of finished searches, for reuse.
var grepBufs = sync.Pool{New: func() any { b := make([]byte, grepChunk); return &b }}

// FileMatches is what searching one file found.
type FileMatches struct {
	Lines []Line
	// Binary says the file was skipped: a NUL byte came before any match.
	Binary bool
	// BinaryLine, when not 0, is the line where a NUL byte stopped the search after matches.
	BinaryLine int
	// LongLines are the lines longer than MaxSearchedLineBytes, searched only that far.
	LongLines []int
	// Err is why the file could not be searched.
	Err error
}

// Line is one matching line: its 1-based number and its text as shown (cut to
// MaxLineBytes, with " …" when cut, invalid UTF-8 replaced).
type Line struct {
	No   int
	Text string
}

// GrepFile searches the file name in the folder d (real is the file's real path; name may
// be a relative path when d is not a walk's) for lines m matches, keeping at most max of
// them; it stops early when quit reports true. What is not a regular file once opened
// (without blocking) is an error in the result (Err).
func GrepFile(d Dir, name, real string, m *Matcher, max int, quit func() bool) *FileMatches {
	r, size, closeFile, err := grepOpen(d.Root, d.file, name, real)
	if err != nil {
		return &FileMatches{Err: err}
	}
	defer closeFile()
	s := grepSearch{m: m, max: max, quit: quit, res: &FileMatches{}, line: 1}
	s.run(r, size)
	return s.res
}

// grepSearch is the state of one file's search.
type grepSearch struct {
	m    *Matcher
	max  int
	quit func() bool
	res  *FileMatches
	line int // number of the line the next searched byte is on
}

// done reports whether the search has what it needs or must stop.
func (s *grepSearch) done() bool { return len(s.res.Lines) >= s.max || s.quit() }

// run searches r, whose size (from its stat) is size: it reads that much, or to its end.
func (s *grepSearch) run(r io.Reader, size int64) {
	bp := grepBufs.Get().(*[]byte)
	buf := *bp
	defer func() {
		if cap(buf) == grepChunk {
			*bp = buf[:grepChunk]
			grepBufs.Put(bp)
		}
	}()
	n, checked := 0, 0 // bytes in buf; how many of them are known to hold no NUL
	var read int64
	eof, first, skipping, consumed := false, true, false, false
	for !s.done() {
		for n < len(buf) && !eof {
			k, err := r.Read(buf[n:])
			n += k
			read += int64(k)
			switch {
			case err == io.EOF || size > 0 && read >= size:
				eof = true // a file that grew is read as far as its size when opened
			case err != nil:
				s.res.Err = err
				return
			}
		}
		data := buf[:n]
		if first {
			first = false
			switch {
			case bytes.HasPrefix(data, []byte{0xff, 0xfe}), bytes.HasPrefix(data, []byte{0xfe, 0xff}):
				s.utf16(data, r, size, eof)
				return
			case bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}):
				n = copy(buf, data[3:]) // the UTF-8 byte order mark is not part of the first line
				data = buf[:n]
			}
		}
		if i := bytes.IndexByte(data[checked:], 0); i >= 0 {
			// A NUL in the first buffer, or before any match, makes the file binary; one
			// after a match stops the search at its line, with a note.
			if consumed && !skipping {
				nul := checked + i
				s.search(data[:bytes.LastIndexByte(data[:nul], '\n')+1], false)
			}
			switch {
			case !consumed || len(s.res.Lines) == 0:
				s.res = &FileMatches{Binary: true}
			case !s.done():
				s.res.BinaryLine = s.line
			}
			return
		}
		consumed = true
		checked = n
		if skipping {
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				n, checked = 0, 0
				if eof {
					return
				}
				continue
			}
			n = copy(buf, data[j+1:])
			checked = n
			s.line++
			skipping = false
			continue
		}
		region := data
		if !eof {
			k := bytes.LastIndexByte(data, '\n')
			if k < 0 {
				if len(buf) < MaxSearchedLineBytes {
					nb := make([]byte, min(2*len(buf), MaxSearchedLineBytes))
					copy(nb, data)
					buf = nb
					continue
				}
				// A line longer than the most searched: search its start, skip the rest.
				s.search(data, false)
				s.res.LongLines = append(s.res.LongLines, s.line)
				n, checked, skipping = 0, 0, true
				continue
			}
			region = data[:k+1]
		}
		s.search(region, eof)
		if eof {
			return
		}
		n = copy(buf, data[len(region):])
		checked = n
	}
}

// search finds the matching lines of region, which starts at the start of line s.line and
// holds whole lines (the last one may lack its "\n"), and moves s.line past it. When last is
// set, nothing of the file follows region: the lines after its last match are not counted
// (counting them, for nothing, was a tenth of a search that finds nothing).
func (s *grepSearch) search(region []byte, last bool) {
	pos, counted := 0, 0
	for !s.done() {
		st, end, ok := s.m.next(region, pos)
		if !ok {
			break
		}
		s.line += bytes.Count(region[counted:st], []byte{'\n'})
		counted = st
		s.res.Lines = append(s.res.Lines, Line{No: s.line, Text: shownLine(region[st:end])})
		pos = end + 1
	}
	if !last {
		s.line += bytes.Count(region[counted:], []byte{'\n'})
	}
}

// shownLine returns a matching line as grep shows it: without a "\r" at its end, cut to
// MaxLineBytes (then ending in " …"), invalid UTF-8 replaced.
func shownLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	t := textcut.Valid(textcut.Runes(b, MaxLineBytes))
	if len(b) > MaxLineBytes {
		t += " …"
	}
	return t
}

// utf16 searches a file that starts with a UTF-16 byte order mark, head being what was read
// of it so far: the whole file is transcoded to UTF-8 and searched, when it is at most
// MaxUTF16Bytes; a larger one is skipped as binary.
func (s *grepSearch) utf16(head []byte, r io.Reader, size int64, eof bool) {
	if size > MaxUTF16Bytes {
		s.res = &FileMatches{Binary: true}
		return
	}
	data := append([]byte{}, head...)
	if !eof {
		rest, err := io.ReadAll(io.LimitReader(r, MaxUTF16Bytes+1-int64(len(data))))
		if err != nil {
			s.res.Err = err
			return
		}
		data = append(data, rest...)
		if len(data) > MaxUTF16Bytes {
			s.res = &FileMatches{Binary: true}
			return
		}
	}
	big := data[0] == 0xfe
	units := make([]uint16, 0, len(data)/2)
	for i := 2; i+1 < len(data); i += 2 {
		if big {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			units = append(units, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	text := make([]byte, 0, len(units)+len(units)/2)
	for _, r := range utf16.Decode(units) {
		text = utf8.AppendRune(text, r)
	}
	if bytes.IndexByte(text, 0) >= 0 {
		s.res = &FileMatches{Binary: true}
		return
	}
	s.search(text, true)
}
