// This file holds a session's journal: one JSON line per event (a checkpoint opened, a
// file's state before a tool changed it, its state after), appended before the change it
// describes, so that a kill -9 at any point leaves a journal that says what to restore.

package checkpoint

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"
)

// State is what a file was at one moment.
type State struct {
	// Kind is "none" (no file), "file" (a regular file), "link" (a symbolic link) or
	// "other" (a socket, a device...: never restored).
	Kind string `json:"k"`
	Hash string `json:"h,omitempty"` // a file's content, when kept
	Mode uint32 `json:"m,omitempty"` // a file's permission bits
	Size int64  `json:"s,omitempty"`
	// MTime (nanoseconds) tells a file whose content was not kept from another.
	MTime int64  `json:"t,omitempty"`
	Link  string `json:"l,omitempty"` // a link's target
	// NotKept says why a file's content was not kept (too big, unreadable).
	NotKept string `json:"x,omitempty"`
}

// Absent is the state of a path with no file.
var Absent = State{Kind: "none"}

// same reports whether a and b are the same file content, as far as they tell.
func same(a, b State) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case "file":
		if a.Mode != b.Mode {
			return false
		}
		if a.Hash != "" && b.Hash != "" {
			return a.Hash == b.Hash
		}
		// One side's content was not read (too big, unreadable, or the other is a state
		// from a snapshot's limit): size and modification time tell.
		return a.Size == b.Size && a.MTime == b.MTime
	case "link":
		return a.Link == b.Link
	}
	return true
}

// record is one journal line.
type record struct {
	// T is "begin" (a checkpoint opened), "before" (a file's state before a change),
	// "after" (after it), "incomplete" (something could not be kept), "evicted" (the
	// session's blobs were given up).
	T      string    `json:"t"`
	CP     string    `json:"cp,omitempty"`
	Prompt string    `json:"prompt,omitempty"`
	Time   time.Time `json:"time,omitzero"`
	Safety string    `json:"safety,omitempty"` // begin: the checkpoint a rewind went to
	Path   string    `json:"path,omitempty"`
	State  *State    `json:"state,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// Manifest is, for "bash" (a command about to run), the blob holding the snapshot taken
	// before it (a JSON object: path -> State); Snap numbers the command, which "bashdone"
	// names once its changes are recorded. A "bash" without its "bashdone" is a command pid
	// stopped during: its changes are found when the session is opened again.
	Manifest string `json:"manifest,omitempty"`
	Snap     int64  `json:"snap,omitempty"`
	// By is, for "after", the tool that made the change (changes/list's "by"): "edit",
	// "write", "bash", "task" for a subagent's, an MCP tool's full name; "" for a rewind's
	// or an undo's own, and in journals written before it was recorded.
	By string `json:"by,omitempty"`
}

// fileRec is what a checkpoint knows of one file.
type fileRec struct {
	path   string
	before State
	after  *State // nil until the change ended (or when pid stopped during it)
	// by names the tools that changed it in this checkpoint, each once, in order.
	by []string
}

// cp is one checkpoint.
type cp struct {
	id, prompt, safety string
	time               time.Time
	files              map[string]*fileRec
	order              []string // paths in the order they were first changed
	incomplete         []string // why parts could not be kept
}

// journal is a journal read back.
type journal struct {
	cps     []*cp
	evicted bool
	// pending are the bash commands begun and not done (pid stopped during them), by snap.
	pending map[int64]record
	// snaps is the highest snap number used.
	snaps int64
}

// readJournal reads the journal at p. Lines it cannot read are skipped (a torn last line
// after a kill -9).
func readJournal(p string) (*journal, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &journal{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	j := &journal{}
	byID := map[string]*cp{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		j.apply(&r, byID)
	}
	return j, nil
}

// apply adds one record to the journal.
func (j *journal) apply(r *record, byID map[string]*cp) {
	switch r.T {
	case "evicted":
		j.evicted = true
		return
	case "bash":
		if j.pending == nil {
			j.pending = map[int64]record{}
		}
		j.pending[r.Snap] = *r
		j.snaps = max(j.snaps, r.Snap)
		return
	case "bashdone":
		delete(j.pending, r.Snap)
		return
	}
	if r.T == "begin" {
		if _, dup := byID[r.CP]; dup || r.CP == "" {
			return
		}
		c := &cp{id: r.CP, prompt: r.Prompt, safety: r.Safety, time: r.Time, files: map[string]*fileRec{}}
		byID[r.CP] = c
		j.cps = append(j.cps, c)
		return
	}
	c := byID[r.CP]
	if c == nil {
		return
	}
	switch r.T {
	case "before":
		if r.State == nil || r.Path == "" || c.files[r.Path] != nil {
			return
		}
		c.files[r.Path] = &fileRec{path: r.Path, before: *r.State}
		c.order = append(c.order, r.Path)
	case "after":
		if f := c.files[r.Path]; f != nil && r.State != nil {
			st := *r.State
			f.after = &st
			if r.By != "" && !slices.Contains(f.by, r.By) {
				f.by = append(f.by, r.By)
			}
		}
	case "incomplete":
		c.incomplete = append(c.incomplete, r.Reason)
	}
}

// refs returns the blobs the journal refers to: its files' states, and the snapshots of
// the commands pid stopped during (with the contents they name), which recover reads. The
// snapshots of finished commands are not needed any more.
func (j *journal) refs(st *Store) map[string]bool {
	out := map[string]bool{}
	for _, c := range j.cps {
		for _, f := range c.files {
			for _, s := range []*State{&f.before, f.after} {
				if s != nil && s.Hash != "" {
					out[s.Hash] = true
				}
			}
		}
	}
	for _, r := range j.pending {
		if r.Manifest == "" {
			continue
		}
		out[r.Manifest] = true
		var m map[string]State
		if data, err := st.get(r.Manifest); err == nil && json.Unmarshal(data, &m) == nil {
			for _, s := range m {
				if s.Hash != "" {
					out[s.Hash] = true
				}
			}
		}
	}
	return out
}

// appendEvicted marks the journal at p as given up.
func appendEvicted(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(record{T: "evicted", Time: time.Now().UTC()})
	_, werr := f.Write(append(b, '\n'))
	return errors.Join(werr, f.Close())
}
