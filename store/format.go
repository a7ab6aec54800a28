// This file holds the session file format: the header and entry types, writing a line, and
// reading a whole file back into entries and the current branch, skipping (and reporting)
// the lines it cannot use. docs/sessions.md is the format's description for people.

package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/llm"
	"github.com/tidwall/gjson"
)

// Header is a session file's first line: {"type":"session","version":1,...}. It carries
// what re-creates the session after a restart. It never carries a key: Model names the
// environment variable of its key (apiKeyEnv), never the key.
type Header struct {
	ID            string          `json:"id"`
	Cwd           string          `json:"cwd"`
	CreatedAt     time.Time       `json:"createdAt"`
	Model         json.RawMessage `json:"model,omitempty"` // the model config, never a key
	ToolExecution string          `json:"toolExecution,omitempty"`
	Permissions   json.RawMessage `json:"permissions,omitempty"`
	ScriptedTools json.RawMessage `json:"scriptedTools,omitempty"`
	SystemPrompt  string          `json:"systemPrompt,omitempty"`
	// AppendSystemPrompt is what the session adds to its system prompt.
	AppendSystemPrompt string   `json:"appendSystemPrompt,omitempty"`
	Tools              []string `json:"tools"` // the tools active at the start
	ForkedFrom         *Fork    `json:"forkedFrom,omitempty"`
	// MCPServers are the session's own MCP servers (session/new's mcpServers; the settings'
	// are read again when it is loaded). Values may name environment variables (${VAR}),
	// never hold them.
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
	// Mode is the session's mode when the file was made ("" is "default"); later changes
	// are KindMode entries.
	Mode string `json:"mode,omitempty"`
	// Hooks are the session's own hooks (session/new's "hooks"), as given.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// ParentSessionID is, for a subagent's session, the session whose task call made it;
	// ParentToolCallID that call.
	ParentSessionID  string `json:"parentSessionId,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
}

// Fork says which session a forked session was copied from, and how many of its messages.
type Fork struct {
	SessionID    string `json:"sessionId"`
	MessageCount int    `json:"messageCount"`
}

// Entry kinds.
const (
	KindMessage    = "message"
	KindCompaction = "compaction"
	KindModel      = "model"
	// KindMode is a change of the session's mode ("plan", "auto"...).
	KindMode = "mode"
	// KindUnsaved marks a hole: saving the session failed here (a full disk, say), and
	// what the session did after it, until the entry after the marker, is not in the file.
	KindUnsaved = "unsaved"
	// KindCheckpoint marks where a checkpoint was opened (a prompt's, right before its user
	// message, or a rewind's safety checkpoint): the conversation as it stood there is the
	// branch up to this entry.
	KindCheckpoint = "checkpoint"
	// KindRewind marks a rewind of the conversation: its parent is the checkpoint entry
	// rewound to, so that the branch through it leaves out everything after that point
	// (every line stays in the file).
	KindRewind = "rewind"
	// KindReview records a keep or an undo of the review of a prompt's changes
	// (changes/keep, changes/undo): the hunks of one file now kept, and the changes an
	// undo took back, which the model is told of at the next prompt. It is appended at
	// the conversation's end, and read back from every branch (a review is of the files).
	KindReview = "review"
)

// Entry is one line after the header. Kind ("type" on the wire) is KindMessage,
// KindCompaction, KindModel (a model change) or KindMode (a mode change), and the field of that name holds its
// content. On the wire the content is under the key named like the kind:
// {"type":"message","id":...,"parentId":...,"timestamp":...,"message":{...}}.
type Entry struct {
	Kind       string
	ID         string
	ParentID   string // "" for a root (the first entry)
	Timestamp  time.Time
	Message    *llm.Message    // Kind "message"
	Compaction *Compaction     // Kind "compaction"
	Model      json.RawMessage // Kind "model": the new model config, never a key
	Unsaved    *Unsaved        // Kind "unsaved"
	Mode       string          // Kind "mode": the new mode's id
	Checkpoint *Checkpoint     // Kind "checkpoint"
	Rewind     *Rewind         // Kind "rewind"
	Review     *Review         // Kind "review"
}

// branchSum is what the branch from the root to an entry holds, as far as session/list
// needs to know: its message entries, and where its first user message is (the title).
// Append writes it at the end of every line as "branch": {"messages", "firstUser"?: {"id",
// "offset"}}, so that a file is summarized from its header and its last line (list.go).
// Readers compute it for themselves as they read (parser.line); the written one is only
// ever read from a file's last line.
type branchSum struct {
	Messages int
	// FirstUser is the id of the branch's first user message ("" when it has none), and
	// FirstAt the byte offset of its line from the file's start.
	FirstUser string
	FirstAt   int64
}

// next returns the sum of an entry whose parent's sum is s: the entry id, whose line starts
// at offset at, is a message when isMsg, a user message when isUser.
func (s branchSum) next(id string, at int64, isMsg, isUser bool) branchSum {
	if isMsg {
		s.Messages++
	}
	if isUser && s.FirstUser == "" {
		s.FirstUser, s.FirstAt = id, at
	}
	return s
}

// appendBranch appends s as a line's "branch" member (with its leading comma).
func appendBranch(b []byte, s *branchSum) []byte {
	b = append(b, `,"branch":{"messages":`...)
	b = strconv.AppendInt(b, int64(s.Messages), 10)
	if s.FirstUser != "" {
		b = append(b, `,"firstUser":{"id":`...)
		b = llm.AppendString(b, s.FirstUser)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, s.FirstAt, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// Checkpoint is a checkpoint's mark in the session file; what the files were is kept by
// package checkpoint, under the same id.
type Checkpoint struct {
	ID     string `json:"id"`
	Prompt string `json:"prompt,omitempty"` // the first characters of the prompt's text
	// Safety is the checkpoint a rewind rewound to, for a rewind's own checkpoint.
	Safety string `json:"safety,omitempty"`
}

// Rewind is a rewind of the conversation to the checkpoint CheckpointID.
type Rewind struct {
	CheckpointID string `json:"checkpointId"`
	Restore      string `json:"restore"` // "conversation" or "both"
}

// Review is a keep or an undo of one file of a checkpoint's changes: Kept replaces the ids
// of the hunks kept before (package changes' Entry); Undone are the changes an undo took
// back, for the model's note at the next prompt.
type Review struct {
	changes.Entry
	Undone []changes.Undone `json:"undone,omitempty"`
}

// Unsaved is a hole in a session file: saving failed for Reason, and the messages the
// session went on with after that, until the next entry, were not written.
type Unsaved struct {
	Reason string `json:"reason"`
}

// Compaction replaces the messages before FirstKeptID, on its branch, with Summary.
type Compaction struct {
	Summary      string `json:"summary"`
	FirstKeptID  string `json:"firstKeptId"` // the entry id of the first message kept after the summary ("" when none is kept)
	TokensBefore int    `json:"tokensBefore"`
	Reason       string `json:"reason,omitempty"` // manual, threshold, overflow
}

// Loaded is what a session file holds.
type Loaded struct {
	Header  Header
	Entries []Entry // every readable entry, in file order
	Branch  []Entry // the current branch: from the root to the last entry (leaf), by parentId
	// Problems says which lines were skipped and why, one sentence each naming the file
	// and line: a torn last line (a "warning:", expected after a crash), unreadable lines,
	// unknown entry types. The daemon reports them; loading never fails for them.
	Problems []string
}

// secretNames are member names refused in a stored model config, in lower case.
var secretNames = []string{"apikey", "api_key", "key", "token", "authorization", "password", "secret"}

// checkNoSecret returns an error when the JSON object raw has a top-level member named
// like a secret. Anything that is not an object passes.
func checkNoSecret(what string, raw json.RawMessage) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	for name := range obj {
		for _, s := range secretNames {
			if strings.EqualFold(name, s) {
				return fmt.Errorf("store: the %s has a member %q; pid never saves keys in session files (name the key's environment variable in apiKeyEnv instead)", what, name)
			}
		}
	}
	return nil
}

// wireHeader is the header line's shape.
type wireHeader struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
	Header
}

// encodeHeader returns h's header line, newline included.
func encodeHeader(h *Header) ([]byte, error) {
	if len(h.Model) > 0 {
		if err := checkNoSecret("model config", h.Model); err != nil {
			return nil, err
		}
	}
	w := wireHeader{Type: "session", Version: Version, Header: *h}
	if w.Tools == nil {
		w.Tools = []string{}
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("store: the session header cannot be written as JSON: %w", err)
	}
	return append(b, '\n'), nil
}

// timeLayout writes entry timestamps: ISO 8601 in UTC, to the millisecond.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// appendTime appends t as timeLayout does, without parsing the layout each time (this is
// on the path of every Append).
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeLayout)
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

// appendDigits appends the last width decimal digits of v >= 0, zero-padded.
func appendDigits(b []byte, v, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		d := v
		for range i {
			d /= 10
		}
		b = append(b, byte('0'+d%10))
	}
	return b
}

// appendEntry appends e's line, newline included, to b. e must be checked (checkEntry).
func appendEntry(b []byte, e *Entry) ([]byte, error) { return appendLine(b, e, nil) }

// appendLine is appendEntry, with the entry's branch written after it when sum is set.
func appendLine(b []byte, e *Entry, sum *branchSum) ([]byte, error) {
	start := len(b)
	b = append(b, `{"type":`...)
	b = llm.AppendString(b, e.Kind)
	b = append(b, `,"id":`...)
	b = llm.AppendString(b, e.ID)
	if e.ParentID == "" {
		b = append(b, `,"parentId":null`...)
	} else {
		b = append(b, `,"parentId":`...)
		b = llm.AppendString(b, e.ParentID)
	}
	b = append(b, `,"timestamp":"`...)
	b = appendTime(b, e.Timestamp)
	b = append(b, '"')
	var err error
	switch e.Kind {
	case KindMessage:
		b = append(b, `,"message":`...)
		b, err = e.Message.AppendJSON(b)
	case KindCompaction:
		var c []byte
		c, err = json.Marshal(e.Compaction)
		b = append(b, `,"compaction":`...)
		b = append(b, c...)
	case KindModel:
		b = append(b, `,"model":`...)
		b, err = llm.AppendRaw(b, e.Model)
	case KindUnsaved:
		var u []byte
		u, err = json.Marshal(e.Unsaved)
		b = append(b, `,"unsaved":`...)
		b = append(b, u...)
	case KindMode:
		b = append(b, `,"mode":`...)
		b = llm.AppendString(b, e.Mode)
	case KindCheckpoint:
		var c []byte
		c, err = json.Marshal(e.Checkpoint)
		b = append(b, `,"checkpoint":`...)
		b = append(b, c...)
	case KindRewind:
		var c []byte
		c, err = json.Marshal(e.Rewind)
		b = append(b, `,"rewind":`...)
		b = append(b, c...)
	case KindReview:
		var c []byte
		c, err = json.Marshal(e.Review)
		b = append(b, `,"review":`...)
		b = append(b, c...)
	}
	if err != nil {
		return b[:start], fmt.Errorf("store: entry %s cannot be written as JSON: %w", e.ID, err)
	}
	if sum != nil {
		b = appendBranch(b, sum)
	}
	b = append(b, '}')
	// Raw JSON (tool arguments, details, a model config) may hold newlines between its
	// tokens. A newline inside a JSON string is always escaped, so every newline byte in
	// the line is such whitespace, and a space does as well.
	line := b[start:]
	for i := bytes.IndexByte(line, '\n'); i >= 0; i = bytes.IndexByte(line, '\n') {
		line[i] = ' '
		line = line[i+1:]
	}
	return append(b, '\n'), nil
}

// checkEntry returns an error when e's kind and content do not go together.
func checkEntry(e *Entry) error {
	switch e.Kind {
	case KindMessage:
		if e.Message == nil {
			return errors.New("store: a message entry without a message")
		}
	case KindCompaction:
		if e.Compaction == nil {
			return errors.New("store: a compaction entry without a compaction")
		}
	case KindModel:
		if len(e.Model) == 0 || !json.Valid(e.Model) {
			return errors.New("store: a model entry needs the model config as JSON")
		}
		if err := checkNoSecret("model config", e.Model); err != nil {
			return err
		}
	case KindUnsaved:
		if e.Unsaved == nil {
			return errors.New("store: an unsaved entry without its reason")
		}
	case KindMode:
		if e.Mode == "" {
			return errors.New("store: a mode entry without its mode")
		}
	case KindCheckpoint:
		if e.Checkpoint == nil || e.Checkpoint.ID == "" {
			return errors.New("store: a checkpoint entry without its checkpoint id")
		}
	case KindRewind:
		if e.Rewind == nil || e.Rewind.CheckpointID == "" {
			return errors.New("store: a rewind entry without its checkpoint id")
		}
	case KindReview:
		if e.Review == nil || e.Review.CheckpointID == "" || e.Review.Path == "" {
			return errors.New("store: a review entry without its checkpoint id and path")
		}
	default:
		return fmt.Errorf("store: unknown entry kind %q (want message, compaction, model, mode, unsaved, checkpoint, rewind or review)", e.Kind)
	}
	return nil
}

// wireEntry is an entry line's shape, for reading.
type wireEntry struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	ParentID   *string         `json:"parentId"`
	Timestamp  time.Time       `json:"timestamp"`
	Message    json.RawMessage `json:"message"`
	Compaction *Compaction     `json:"compaction"`
	Model      json.RawMessage `json:"model"`
	Unsaved    *Unsaved        `json:"unsaved"`
	Mode       *string         `json:"mode"`
	Checkpoint *Checkpoint     `json:"checkpoint"`
	Rewind     *Rewind         `json:"rewind"`
	Review     *Review         `json:"review"`
}

// parsed is a file read by parse.
type parsed struct {
	loaded *Loaded
	// ids holds every entry id of the file: true for the entries read, false for those of
	// skipped lines (which stay taken, so that no new entry reuses them).
	ids  map[string]bool
	leaf string
	// skipped maps the id of a skipped line (when its id could be made out) to its
	// nearest readable ancestor ("" for none), so that the entries after it that name it
	// as their parent hang from that ancestor instead of being lost with it.
	skipped map[string]string
	// tornAt is the offset of a torn last line (the file's readable part ends there), -1
	// when the file ends with a complete line.
	tornAt int
	// raw holds, when messages were not decoded, each entry's message JSON ("" for other
	// kinds), by position in Entries.
	raw []string
	// sums holds each readable entry's branchSum (what File.Append writes after it).
	sums map[string]branchSum
	// lastTime is the timestamp of the last readable entry.
	lastTime time.Time
	// lean keeps no entries (Loaded.Entries and Branch stay empty, raw too): only ids,
	// sums, the leaf and lastTime, for summarizing a file in little memory (list.go).
	lean bool
}

// parse reads a session file's content. It fails only when the header cannot be used;
// every other problem skips a line and is reported. With decode false, messages are left
// as JSON in raw (List decodes only the one it needs for the title).
func parse(path, id string, data []byte, decode bool) (*parsed, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, noHeader(path)
	}
	ps, err := newParser(path, id, data[:nl], decode, false)
	if err != nil {
		return nil, err
	}
	ps.p.loaded.Entries = make([]Entry, 0, bytes.Count(data[nl+1:], []byte{'\n'}))
	// The fast reader works on the file as one string (one copy), the entries' strings
	// pointing into it.
	text := string(data)
	for off := nl + 1; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			ps.torn(int64(off))
			break
		}
		line, at := text[off:off+end], int64(off)
		off += end + 1
		ps.line(line, data[off-end-1:off-1], off == len(text), at)
	}
	return ps.finish(), nil
}

// noHeader is the error for a file without a complete header line.
func noHeader(path string) error {
	return fmt.Errorf("store: %s has no complete header line (pid may have crashed while creating it); delete the file", path)
}

// maxLineBuf caps the line buffer parseFrom keeps between lines: a longer line gets a
// buffer of its own.
const maxLineBuf = 1 << 20

// parseFrom reads a session file from r (positioned at its start) as parse does, a line at
// a time, keeping of each line only what its entry holds (the strings are copied out of
// the line), so that loading costs about the size of what is loaded, not that plus the
// file. total is the file's size when known (to tell its last line), else -1. It also
// returns how many bytes it read, and fails wrapping ErrTooLarge past maxFileSize.
func parseFrom(path, id string, r io.Reader, total int64, decode bool) (*parsed, int64, error) {
	return parseReader(path, id, r, total, decode, false)
}

// parseLean reads a session file from r as parseFrom does, keeping no entries (parsed.lean):
// memory in proportion to the number of entries, never to the size of their lines.
func parseLean(path, id string, r io.Reader, total int64) (*parsed, int64, error) {
	return parseReader(path, id, r, total, false, true)
}

// parseReader is parseFrom, lean or not.
func parseReader(path, id string, r io.Reader, total int64, decode, lean bool) (*parsed, int64, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxFileSize+1), 64<<10)
	var buf []byte
	// next returns the next line without its newline (valid until the next call), and
	// whether it had one.
	next := func() ([]byte, bool, error) {
		buf = buf[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			if err == nil && len(buf) == 0 {
				return chunk[:len(chunk)-1], true, nil
			}
			buf = append(buf, chunk...)
			switch {
			case err == nil:
				return buf[:len(buf)-1], true, nil
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			case errors.Is(err, io.EOF):
				return buf, false, nil
			default:
				return nil, false, fmt.Errorf("store: reading %s: %w", path, err)
			}
		}
	}
	header, complete, err := next()
	if err != nil {
		return nil, 0, err
	}
	if !complete {
		return nil, 0, noHeader(path)
	}
	size := int64(len(header) + 1)
	ps, err := newParser(path, id, header, decode, true)
	if err != nil {
		return nil, 0, err
	}
	ps.p.lean = lean
	for {
		b, complete, err := next()
		if err != nil {
			return nil, 0, err
		}
		if !complete {
			if len(b) > 0 {
				ps.torn(size)
				size += int64(len(b))
			}
			break
		}
		at := size
		size += int64(len(b) + 1)
		ps.line(unsafe.String(unsafe.SliceData(b), len(b)), b, size == total, at)
		if size > maxFileSize {
			return nil, 0, fmt.Errorf("store: %s: %w: more than the %d bytes pid reads", path, ErrTooLarge, maxFileSize)
		}
		if cap(buf) > maxLineBuf && !lean { // a lean parser keeps nothing of its lines: one buffer does
			buf = nil
		}
	}
	if size > maxFileSize {
		return nil, 0, fmt.Errorf("store: %s: %w: more than the %d bytes pid reads", path, ErrTooLarge, maxFileSize)
	}
	return ps.finish(), size, nil
}

// parser reads a session file line by line (see parse and parseFrom).
type parser struct {
	path string
	p    *parsed
	// decode says whether messages are decoded (else kept as JSON in p.raw); own, that
	// the lines are borrowed, so that every string an entry keeps must be copied.
	decode, own bool
	lineNo      int
}

// newParser reads the header line (without its newline) and returns the parser of the
// lines after it.
func newParser(path, id string, header []byte, decode, own bool) (*parser, error) {
	var h wireHeader
	if err := json.Unmarshal(header, &h); err != nil || h.Type != "session" {
		why := "its type is not \"session\""
		if err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("store: the header line of %s is unreadable (%s); it is not a pid session file, move it out of the sessions folder", path, why)
	}
	if h.Version > Version {
		return nil, fmt.Errorf("store: %s: %w (format version %d; this pid reads up to %d): update pid to open it", path, ErrNewerVersion, h.Version, Version)
	}
	if h.Version < 1 {
		return nil, fmt.Errorf("store: the header line of %s has no valid version (%d); it is not a pid session file", path, h.Version)
	}
	p := &parsed{loaded: &Loaded{Header: h.Header, Entries: []Entry{}}, ids: map[string]bool{}, skipped: map[string]string{}, tornAt: -1,
		sums: map[string]branchSum{}}
	l := p.loaded
	if l.Header.ID != id {
		l.Problems = append(l.Problems, fmt.Sprintf("%s: the header says session %q, but the file name says %q; using the file name", path, l.Header.ID, id))
		l.Header.ID = id
	}
	if l.Header.Tools == nil {
		l.Header.Tools = []string{}
	}
	// Lines are counted from 1, the header being line 1.
	return &parser{path: path, p: p, decode: decode, own: own, lineNo: 1}, nil
}

// torn records an incomplete last line starting at offset at.
func (ps *parser) torn(at int64) {
	ps.lineNo++
	ps.p.loaded.Problems = append(ps.p.loaded.Problems, fmt.Sprintf("warning: %s: line %d, the last, is incomplete (a crash while writing it); skipped", ps.path, ps.lineNo))
	ps.p.tornAt = int(at)
}

// line reads one complete line, given as text and as the bytes of the same line, starting
// at offset at of the file; last says it is the file's last.
func (ps *parser) line(line string, b []byte, last bool, at int64) {
	ps.lineNo++
	p, l := ps.p, ps.p.loaded
	if len(strings.TrimSpace(line)) == 0 {
		return
	}
	e, raw, fast := fastEntry(line, ps.decode)
	var err error
	if !fast {
		e, raw, err = decodeEntry(b, ps.decode)
	}
	if err == nil && ps.own {
		ownEntry(&e, line)
		if !p.lean && inside(raw, line) { // a lean parser reads raw in this call only
			raw = strings.Clone(raw)
		}
	}
	if err == nil {
		err = p.link(&e)
	}
	if err != nil {
		msg := fmt.Sprintf("%s: line %d: %v; skipped", ps.path, ps.lineNo, err)
		if last && !errors.Is(err, errUnknownType) {
			msg = fmt.Sprintf("warning: %s: line %d, the last, is unreadable (%v; a crash while writing it?); skipped", ps.path, ps.lineNo, err)
		}
		l.Problems = append(l.Problems, msg+p.skip(line, ps.own))
		return
	}
	var parent branchSum
	if e.ParentID != "" {
		parent = p.sums[e.ParentID]
	}
	isMsg := e.Kind == KindMessage
	isUser := isMsg && (e.Message != nil && e.Message.Role == llm.RoleUser || e.Message == nil && gjson.Get(raw, "role").Str == string(llm.RoleUser))
	p.sums[e.ID] = parent.next(e.ID, at, isMsg, isUser)
	p.lastTime = e.Timestamp
	if p.lean {
		return
	}
	l.Entries = append(l.Entries, e)
	if !ps.decode {
		p.raw = append(p.raw, raw)
	}
}

// finish returns what was read, with the current branch.
func (ps *parser) finish() *parsed {
	ps.p.loaded.Branch = branch(ps.p.loaded.Entries)
	return ps.p
}

// inside reports whether s's bytes lie in line's (a string of the fast reader that points
// into a borrowed line).
func inside(s, line string) bool {
	if len(s) == 0 || len(line) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	start := uintptr(unsafe.Pointer(unsafe.StringData(line)))
	return p >= start && p < start+uintptr(len(line))
}

// own copies every string of e that points into line, a borrowed line: what the fast
// reader leaves there (strings without escapes); unescaped strings and what encoding/json
// decoded are copies already.
func ownEntry(e *Entry, line string) {
	c := func(s *string) {
		if inside(*s, line) {
			*s = strings.Clone(*s)
		}
	}
	switch e.Kind {
	case KindMessage:
		e.Kind = KindMessage
	case KindCompaction:
		e.Kind = KindCompaction
	case KindModel:
		e.Kind = KindModel
	case KindUnsaved:
		e.Kind = KindUnsaved
	case KindMode:
		e.Kind = KindMode
	case KindCheckpoint:
		e.Kind = KindCheckpoint
	case KindRewind:
		e.Kind = KindRewind
	case KindReview:
		e.Kind = KindReview
	default:
		c(&e.Kind)
	}
	c(&e.Mode)
	c(&e.ID)
	c(&e.ParentID)
	m := e.Message
	if m == nil {
		return
	}
	role, stop := string(m.Role), string(m.StopReason)
	c(&role)
	c(&stop)
	m.Role, m.StopReason = llm.Role(role), llm.StopReason(stop)
	c(&m.ErrorMessage)
	c(&m.ToolCallID)
	c(&m.ToolName)
	for i := range m.Content {
		b := &m.Content[i]
		typ := string(b.Type)
		c(&typ)
		b.Type = llm.ContentType(typ)
		c(&b.Text)
		c(&b.Thinking)
		c(&b.ID)
		c(&b.Name)
		c(&b.Data)
		c(&b.MimeType)
	}
}

// errUnknownType is wrapped by decodeEntry's error for an entry type this pid does not know.
var errUnknownType = errors.New("unknown entry type")

// decodeEntry reads one entry line with encoding/json: the reader of lines fastEntry is not
// sure of, and the one whose errors are reported. With decode false a message is left as
// JSON in msgRaw.
func decodeEntry(line []byte, decode bool) (e Entry, msgRaw string, err error) {
	var w wireEntry
	if err := json.Unmarshal(line, &w); err != nil {
		return Entry{}, "", fmt.Errorf("not valid JSON (%v)", err)
	}
	e = Entry{Kind: w.Type, ID: w.ID, Timestamp: w.Timestamp}
	if w.ParentID != nil {
		e.ParentID = *w.ParentID
	}
	if e.ID == "" {
		return Entry{}, "", errors.New("an entry without an id")
	}
	switch w.Type {
	case KindMessage:
		if len(w.Message) == 0 || string(w.Message) == "null" {
			return Entry{}, "", errors.New("a message entry without a message")
		}
		if !decode {
			return e, string(w.Message), nil
		}
		m := new(llm.Message)
		if err := m.UnmarshalJSON(w.Message); err != nil {
			return Entry{}, "", fmt.Errorf("the message is unreadable (%v)", err)
		}
		e.Message = m
	case KindCompaction:
		if w.Compaction == nil {
			return Entry{}, "", errors.New("a compaction entry without a compaction")
		}
		e.Compaction = w.Compaction
	case KindModel:
		if len(w.Model) == 0 || string(w.Model) == "null" {
			return Entry{}, "", errors.New("a model entry without a model")
		}
		e.Model = w.Model
	case KindUnsaved:
		if w.Unsaved == nil {
			return Entry{}, "", errors.New("an unsaved entry without its reason")
		}
		e.Unsaved = w.Unsaved
	case KindMode:
		if w.Mode == nil || *w.Mode == "" {
			return Entry{}, "", errors.New("a mode entry without its mode")
		}
		e.Mode = *w.Mode
	case KindCheckpoint:
		if w.Checkpoint == nil || w.Checkpoint.ID == "" {
			return Entry{}, "", errors.New("a checkpoint entry without its checkpoint id")
		}
		e.Checkpoint = w.Checkpoint
	case KindRewind:
		if w.Rewind == nil || w.Rewind.CheckpointID == "" {
			return Entry{}, "", errors.New("a rewind entry without its checkpoint id")
		}
		e.Rewind = w.Rewind
	case KindReview:
		if w.Review == nil || w.Review.CheckpointID == "" || w.Review.Path == "" {
			return Entry{}, "", errors.New("a review entry without its checkpoint id and path")
		}
		e.Review = w.Review
	default:
		return Entry{}, "", fmt.Errorf("%w %s (written by a newer pid?)", errUnknownType, strconv.Quote(w.Type))
	}
	return e, "", nil
}

// link checks e's id and parent against the entries read so far and records its id. A
// parent that is a skipped line is replaced by that line's nearest readable ancestor.
func (p *parsed) link(e *Entry) error {
	if _, dup := p.ids[e.ID]; dup {
		return fmt.Errorf("id %q is used by an earlier entry", e.ID)
	}
	if e.ParentID != "" && !p.ids[e.ParentID] {
		up, ok := p.skipped[e.ParentID]
		if !ok {
			return fmt.Errorf("parentId %q names no earlier entry", e.ParentID)
		}
		e.ParentID = up
	}
	p.ids[e.ID] = true
	p.leaf = e.ID
	return nil
}

// skip records a skipped line's id, when it can be made out, and returns what to add to its
// report. gjson reads what it can of a damaged line, and the writer puts id and parentId
// first, so a line damaged further on still names them.
func (p *parsed) skip(line string, own bool) string {
	id := gjson.Get(line, "id").String()
	parent := gjson.Get(line, "parentId").String()
	if own {
		id, parent = strings.Clone(id), strings.Clone(parent)
	}
	if !validID(id) {
		return ""
	}
	if _, taken := p.ids[id]; taken {
		return ""
	}
	if !p.ids[parent] {
		up, ok := p.skipped[parent]
		if !ok {
			up = ""
			if parent != "" {
				return "" // its parent is unknown too: entries naming it cannot be placed
			}
		}
		parent = up
	}
	p.ids[id] = false
	p.skipped[id] = parent
	return fmt.Sprintf(" (entries whose parent it was, id %s, hang from its parent instead)", id)
}

// branch returns the entries from the root to the last entry, following parent ids. Every
// parent id names an earlier entry (parse checks it), so the walk ends.
func branch(entries []Entry) []Entry {
	if len(entries) == 0 {
		return nil
	}
	at := make(map[string]int, len(entries))
	for i := range entries {
		at[entries[i].ID] = i
	}
	var rev []int
	for i := len(entries) - 1; ; {
		rev = append(rev, i)
		parent := entries[i].ParentID
		if parent == "" {
			break
		}
		i = at[parent]
	}
	out := make([]Entry, len(rev))
	for j, i := range rev {
		out[len(rev)-1-j] = entries[i]
	}
	return out
}
