// Package review follows a session's changes for the person's review (issue 35;
// docs/protocol.md, "Reviewing a prompt's changes"): which tools are changing which files
// now, what the person kept and undid, the files each call changed, and the changesUpdate
// sent after each tool that changed something. Its entry point is Tracker, made by New for
// each session (a subagent shares its parent's); List, Undo and Keep answer changes/list,
// changes/undo and changes/keep over the session's checkpoints (package checkpoint), with
// the hunk maths of package changes. It knows no face nor session file: it sends and saves
// through the callbacks of its Config.
//
// This file holds the Tracker, its Config and what a prompt's run tells it.
package review

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

// Config is what a Tracker works with.
type Config struct {
	// ID is the session's id, which the errors name.
	ID string
	// Rec is the session's checkpoints; nil when it has none (then List, Undo and Keep
	// must not be called, and AfterTool sends nothing).
	Rec *checkpoint.Session
	// Emit sends a changesUpdate to the session's face. Contract: called with the Tracker's
	// sending lock held (so that two updates go out in the order of their lists), from the
	// goroutine of the run or request that made the change; it must not call back into the
	// Tracker, and it cannot fail (a face that cannot send drops the update).
	Emit func(event.ChangesUpdate)
	// Save appends a review entry (what was kept or undone) to the session's file.
	// Contract: called by Undo and Keep with no lock of the Tracker held; a failure is
	// Save's to report (the review goes on in memory).
	Save func(store.Review)
	// Mark marks safety checkpoint id, made by an undo of checkpoint of's changes (prompt is
	// its prompt's text), in the session's file. Contract: called by Undo, no lock of the
	// Tracker held; a failure is Mark's to report.
	Mark func(id, prompt, of string)
	// Write, when not nil, is how an undo writes a text file through the editor's buffers
	// (the session's EditorFiles.Write); nil writes to disk. Contract: called by Undo under
	// the request's ctx, with no lock of the Tracker held; it must return once ctx ends; an
	// error leaves the file as it was and fails the undo.
	Write func(ctx context.Context, path, text string) error
}

// Tracker is the review of a session's changes. A subagent shares its parent's (its
// changes are recorded in the parent's checkpoints, and its parent's changesUpdate names
// them). Its methods are safe for concurrent use; its own mutexes guard it, and none is
// held while calling out but send.mu, held while the list is made and Emit called.
type Tracker struct {
	cfg Config

	// mu guards the fields below it.
	mu sync.Mutex
	// review is what the person kept; undone the changes undone since the last prompt
	// began, for the model's note.
	review changes.Review
	undone []changes.Undone
	// open is the checkpoint of the latest prompt (what changesUpdate lists).
	open string
	// writing counts the write and edit calls running per path; bashing the bash calls
	// running (any of them may change any file).
	writing map[string]int
	bashing int
	// callFiles holds, per call key (CallKey), the files a bash call (or a task call's
	// subagent's bash calls) changed, until the call's ToolEnd takes them.
	callFiles map[string][]event.FileText

	// send orders the updates.
	send struct {
		// mu guards gen and sent, and is held from reading the generation to sending the
		// update (so two updates go out in the order of their lists).
		mu sync.Mutex
		// gen is the checkpoints' generation the last update was made at; sent the
		// files of the last update of a run (nil after an undo or a keep), so that a
		// call that changed nothing the list shows (an edit of an editor's buffer only)
		// sends none.
		gen  uint64
		sent []event.ChangedFile
	}
}

// New returns the review of a new session, or of a loaded one with its file's review
// entries (Entries): reviews replayed in file order, undone the changes undone since its
// last prompt began.
func New(cfg Config, reviews []store.Review, undone []changes.Undone) *Tracker {
	t := &Tracker{cfg: cfg, writing: map[string]int{}, callFiles: map[string][]event.FileText{}}
	for _, e := range reviews {
		t.review.Replay(e.Entry)
	}
	t.undone = undone
	return t
}

// Entries returns the review entries of a session file, in file order (every branch: a
// review is of the files), and the changes undone after the last prompt's checkpoint mark
// (the model was not told of them yet): what New takes for a loaded session.
func Entries(entries []store.Entry) (reviews []store.Review, undone []changes.Undone) {
	for _, e := range entries {
		switch {
		case e.Kind == store.KindCheckpoint && e.Checkpoint != nil && e.Checkpoint.Safety == "":
			undone = nil
		case e.Kind == store.KindReview && e.Review != nil:
			reviews = append(reviews, *e.Review)
			undone = append(undone, e.Review.Undone...)
		}
	}
	return reviews, undone
}

// Error is a request the Tracker cannot do: Invalid when the request is at fault (an
// unknown checkpoint, a path the checkpoint did not change), else it failed (a running tool
// may be changing the file, the checkpoints could not be read or written). Msg says why.
type Error struct {
	Invalid bool
	Msg     string
}

func (e *Error) Error() string { return e.Msg }

func invalid(msg string) error { return &Error{Invalid: true, Msg: msg} }
func failed(msg string) error  { return &Error{Msg: msg} }

// IsInvalid reports whether err is an Error the request is at fault for.
func IsInvalid(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Invalid
}

// Running counts a running tool that changes path ("" for bash: any file), so that an
// undo of the file waits for it; the function it returns is called once the tool ended.
func (t *Tracker) Running(path string) (done func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if path == "" {
		t.bashing++
	} else {
		t.writing[path]++
	}
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if path == "" {
			t.bashing--
			return
		}
		if t.writing[path]--; t.writing[path] <= 0 {
			delete(t.writing, path)
		}
	}
}

// busy returns an error when a running tool may be changing path.
func (t *Tracker) busy(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.bashing > 0:
		return failed("a bash command of the running prompt may be changing " + path + ": undo it once the command ended")
	case t.writing[path] > 0:
		return failed("a tool of the running prompt is changing " + path + ": undo it once the tool ended")
	}
	return nil
}

// Start notes checkpoint cp ("" when the prompt has none) of a prompt that begins, and
// takes the changes undone since the last one: the model's note (changes.Note), "" when
// none. Called by the session's prompt (not a subagent's).
func (t *Tracker) Start(cp string) string {
	t.send.mu.Lock()
	if rec := t.cfg.Rec; rec != nil {
		t.send.gen = rec.Generation()
	}
	t.send.sent = []event.ChangedFile{}
	t.send.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if cp != "" {
		t.open = cp
	}
	note := changes.Note(t.undone)
	t.undone = nil
	return note
}

// WithNote puts note as a text block before the first user message's own content (a user
// message of its own when there is none); prompts as they are when note is "".
func WithNote(prompts []llm.Message, note string) []llm.Message {
	if note == "" {
		return prompts
	}
	out := slices.Clone(prompts)
	for i, m := range out {
		if m.Role == llm.RoleUser {
			m.Content = append([]llm.Content{llm.Text(note)}, m.Content...)
			out[i] = m
			return out
		}
	}
	return append([]llm.Message{llm.NewUser(note)}, out...)
}

// AfterTool sends changesUpdate when the checkpoints recorded a change since the last
// one and the list differs from the one this run sent last. Called on a ToolEnd of a
// prompt's run (a subagent's included).
func (t *Tracker) AfterTool() {
	rec := t.cfg.Rec
	if rec == nil {
		return
	}
	t.send.mu.Lock()
	defer t.send.mu.Unlock()
	g := rec.Generation()
	if g == t.send.gen {
		return
	}
	t.send.gen = g
	t.mu.Lock()
	cp := t.open
	t.mu.Unlock()
	if cp != "" {
		t.sendLocked(cp, true)
	}
}

// sendNow sends changesUpdate for checkpoint cp (after an undo or a keep).
func (t *Tracker) sendNow(cp string) {
	t.send.mu.Lock()
	defer t.send.mu.Unlock()
	t.send.gen = t.cfg.Rec.Generation()
	t.sendLocked(cp, false)
}

// sendLocked lists checkpoint cp and sends changesUpdate; after a tool (run), not when the
// list is the one sent last. Caller holds send.mu.
func (t *Tracker) sendLocked(cp string, run bool) {
	list, err := t.list(cp)
	if err != nil {
		return
	}
	files := make([]event.ChangedFile, 0, len(list))
	for _, f := range list {
		n := f.file.Count()
		files = append(files, event.ChangedFile{Path: n.Path, Change: n.Change, Added: n.Added, Removed: n.Removed, Pending: n.Pending})
	}
	if run && t.send.sent != nil && slices.Equal(files, t.send.sent) {
		return
	}
	t.send.sent = files
	if !run {
		t.send.sent = nil
	}
	t.cfg.Emit(event.ChangesUpdate{CheckpointID: cp, Files: files})
}
