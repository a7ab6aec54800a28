// This file holds the review of a prompt's changes (issue 35; docs/protocol.md, "Reviewing
// a prompt's changes"): changes/list cuts what each file of a checkpoint is now against
// what it was before into hunks (package changes), changes/undo takes chosen hunks back in
// a safety checkpoint of its own, changes/keep marks them reviewed, changesUpdate follows
// each tool call that changed files, and the next prompt tells the model what was undone.

package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

// ChangedFile is one file of changes/list: {path, change, binary?, reviewed, hunks, by}.
type ChangedFile = changes.File

// SkippedHunk is a hunk an undo left as it is, and why.
type SkippedHunk = changes.Skip

// Changes is changes/list's answer.
type Changes struct {
	CheckpointID string        `json:"checkpointId"`
	Files        []ChangedFile `json:"files"`
}

// ChangesParams are changes/list's params (native, and _pid/changes/list on ACP).
type ChangesParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
}

// UndoParams are changes/undo's params.
type UndoParams struct {
	SessionID    string   `json:"sessionId"`
	CheckpointID string   `json:"checkpointId"`
	Path         string   `json:"path"`
	HunkIDs      []string `json:"hunkIds"`
	Force        bool     `json:"force"`
}

// UndoResult is changes/undo's answer.
type UndoResult struct {
	Path               string        `json:"path"`
	Undone             []string      `json:"undone"`
	Skipped            []SkippedHunk `json:"skipped"`
	SafetyCheckpointID string        `json:"safetyCheckpointId"`
}

// KeepParams are changes/keep's params.
type KeepParams struct {
	SessionID    string   `json:"sessionId"`
	CheckpointID string   `json:"checkpointId"`
	Path         string   `json:"path"`
	HunkIDs      []string `json:"hunkIds"`
}

// KeepResult is changes/keep's answer.
type KeepResult struct {
	Kept []string `json:"kept"`
}

// changesState is the review of a session's changes. A subagent shares its parent's (its
// changes are recorded in the parent's checkpoints, and its parent's changesUpdate names
// them). Its own mutexes guard it; none is held while calling out but emit.mu, held while
// the list is made and sent.
type changesState struct {
	// root is the session whose face and id the notifications carry.
	root *Session

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
	// callFiles holds, per "SESSION/CALL" (a call id is its session's own), the files a
	// bash call (or a task call's subagent's bash calls) changed, until the call's ToolEnd
	// takes them.
	callFiles map[string][]event.FileText

	// emit orders the updates.
	emit struct {
		// mu guards gen, and is held from reading the generation to sending the update
		// (so two updates go out in the order of their lists).
		mu sync.Mutex
		// gen is the checkpoints' generation the last update was made at; sent the
		// files of the last update of a run (nil after an undo or a keep), so that a
		// call that changed nothing the list shows (an edit of an editor's buffer only)
		// sends none.
		gen  uint64
		sent []event.ChangedFile
	}
}

// openChanges sets up the session's review: a subagent's is its parent's; a loaded session's
// comes back from its file's review entries (r.reviews). Called by build.
func (s *Session) openChanges(r *restoring) {
	if c := s.sub.child; c != nil {
		s.changes = c.parent.changes
		return
	}
	s.changes = &changesState{root: s, writing: map[string]int{}, callFiles: map[string][]event.FileText{}}
	if r == nil {
		return
	}
	for _, e := range r.reviews {
		s.changes.review.Replay(e.Entry)
	}
	s.changes.undone = r.undone
}

// reviewsOf returns the review entries of a session file, in file order (every branch: a
// review is of the files), and the changes undone after the last prompt's checkpoint mark
// (the model was not told of them yet).
func reviewsOf(entries []store.Entry) (reviews []store.Review, undone []changes.Undone) {
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

// busy returns an error when a running tool may be changing path.
func (c *changesState) busy(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.bashing > 0:
		return fmt.Errorf("%w: a bash command of the running prompt may be changing %s: undo it once the command ended", ErrFailed, path)
	case c.writing[path] > 0:
		return fmt.Errorf("%w: a tool of the running prompt is changing %s: undo it once the tool ended", ErrFailed, path)
	}
	return nil
}

// running counts a running tool that changes path ("" for bash: any file); the function it
// returns is called once the tool ended.
func (c *changesState) running(path string) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if path == "" {
		c.bashing++
	} else {
		c.writing[path]++
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if path == "" {
			c.bashing--
			return
		}
		if c.writing[path]--; c.writing[path] <= 0 {
			delete(c.writing, path)
		}
	}
}

// startChanges notes the checkpoint of a prompt that begins, and takes the changes undone
// since the last one: the model's note (changes.Note), "" when none. Called by Prompt.
func (s *Session) startChanges(cp string) string {
	c := s.changes
	if c == nil || s.sub.child != nil {
		return ""
	}
	rec := s.checkpts.rec
	c.emit.mu.Lock()
	if rec != nil {
		c.emit.gen = rec.Generation()
	}
	c.emit.sent = []event.ChangedFile{}
	c.emit.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp != "" {
		c.open = cp
	}
	note := changes.Note(c.undone)
	c.undone = nil
	return note
}

// withUndoneNote puts note as a text block before the first user message's own content.
func withUndoneNote(prompts []llm.Message, note string) []llm.Message {
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

// changesAfterTool sends changesUpdate when the checkpoints recorded a change since the last
// one. Called by afterEvent on a ToolEnd of a prompt's run (a subagent's included).
func (s *Session) changesAfterTool() {
	c := s.changes
	rec := s.checkpts.rec
	if c == nil || rec == nil {
		return
	}
	c.emit.mu.Lock()
	defer c.emit.mu.Unlock()
	g := rec.Generation()
	if g == c.emit.gen {
		return
	}
	c.emit.gen = g
	c.mu.Lock()
	cp := c.open
	c.mu.Unlock()
	if cp != "" {
		c.sendLocked(cp, true)
	}
}

// sendChanges sends changesUpdate for checkpoint cp (after an undo or a keep).
func (s *Session) sendChanges(cp string) {
	c := s.changes
	c.emit.mu.Lock()
	defer c.emit.mu.Unlock()
	if rec := c.root.checkpts.rec; rec != nil {
		c.emit.gen = rec.Generation()
	}
	c.sendLocked(cp, false)
}

// sendLocked lists checkpoint cp and sends changesUpdate; after a tool (run), not when the
// list is the one sent last. Caller holds emit.mu.
func (c *changesState) sendLocked(cp string, run bool) {
	root := c.root
	list, err := root.listChanges(cp)
	if err != nil {
		return
	}
	files := make([]event.ChangedFile, 0, len(list))
	for _, f := range list {
		n := f.file.Count()
		files = append(files, event.ChangedFile{Path: n.Path, Change: n.Change, Added: n.Added, Removed: n.Removed, Pending: n.Pending})
	}
	if run && c.emit.sent != nil && slices.Equal(files, c.emit.sent) {
		return
	}
	c.emit.sent = files
	if !run {
		c.emit.sent = nil
	}
	root.face.Emit(root, event.ChangesUpdate{CheckpointID: cp, Files: files})
}

// listed is one file of a checkpoint's changes, with the sides it was compared from.
type listed struct {
	file   changes.File
	before changes.Side
	now    changes.Side
	// skip says why no hunk of it can be undone ("" when they can).
	skip string
}

// defaultCheckpoint returns the checkpoint changes/list takes by default: the latest one
// that is not a rewind's or an undo's own ("" when there is none).
func defaultCheckpoint(rec *checkpoint.Session) string {
	list := rec.List()
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Safety == "" {
			return list[i].ID
		}
	}
	return ""
}

// listChanges returns the files checkpoint cp's run (and the runs after it) changed that
// differ now from before, cut into hunks, their states marked, sorted by path.
func (s *Session) listChanges(cp string) ([]listed, error) {
	rec := s.checkpts.rec
	befores, err := rec.Befores(cp)
	if errors.Is(err, checkpoint.ErrUnknown) {
		return nil, invalid("session %s has no checkpoint %q", s.id, cp)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	out := []listed{}
	for _, b := range befores {
		l, ok := s.compareOne(rec, b)
		if !ok {
			continue
		}
		l.file.By = changes.By(b.By...)
		s.changes.mu.Lock()
		s.changes.review.Mark(cp, &l.file)
		s.changes.mu.Unlock()
		out = append(out, l)
	}
	// By path: the order the files were first changed in depends on which of a batch's
	// parallel calls got there first.
	slices.SortFunc(out, func(a, b listed) int { return strings.Compare(a.file.Path, b.file.Path) })
	return out, nil
}

// compareOne compares one file's state before with the file now; ok is false when it is as
// it was.
func (s *Session) compareOne(rec *checkpoint.Session, b checkpoint.Before) (listed, bool) {
	now, nerr := rec.Now(b.Path)
	whole := func(change, id, header, skip string) (listed, bool) {
		f := changes.File{Path: b.Path, Change: change, Binary: true, By: []string{},
			Hunks: []changes.Hunk{{ID: id, Header: header, State: changes.Pending}}}
		return listed{file: f, skip: skip}, true
	}
	change := "modified"
	switch {
	case b.Kind == "none":
		change = "added"
	case nerr == nil && now.Kind == "none":
		change = "deleted"
	}
	switch {
	case nerr != nil:
		why := "it cannot be read now: " + nerr.Error()
		return whole(change, "unreadable", why, why)
	case b.Err != nil:
		why := "its content before the prompt was not kept: " + b.Err.Error()
		return whole(change, "unkept", why, why)
	case b.Kind == "link" || b.Kind == "other" || now.Kind == "link" || now.Kind == "other":
		if b.Kind == now.Kind && b.Link == now.Link && b.Kind != "other" {
			return listed{}, false
		}
		why := "a symbolic link (or not a regular file) on one side: take it back with session/rewind"
		return whole(change, "link", "a symbolic link or a special file changed", why)
	}
	l := listed{before: changes.Side{Data: b.Data, Mode: b.Mode}, now: changes.Side{Data: now.Data, Mode: now.Mode}}
	if b.Kind == "none" {
		l.before = changes.Side{}
	}
	if now.Kind == "none" {
		l.now = changes.Side{}
	}
	l.file = changes.Compare(b.Path, l.before, l.now)
	return l, l.file.Changed()
}

// ListChanges runs changes/list: the changes of checkpoint cp ("" for the latest prompt's).
func (s *Session) ListChanges(cp string) (Changes, error) {
	rec := s.checkpts.rec
	if rec == nil {
		return Changes{}, errNoCheckpoints
	}
	if cp == "" {
		cp = defaultCheckpoint(rec)
		if cp == "" {
			return Changes{Files: []ChangedFile{}}, nil
		}
	}
	list, err := s.listChanges(cp)
	if err != nil {
		return Changes{}, err
	}
	out := Changes{CheckpointID: cp, Files: make([]ChangedFile, 0, len(list))}
	for _, l := range list {
		out.Files = append(out.Files, l.file)
	}
	return out, nil
}

// resolveReview returns the checkpoint (cp, or the default) and the absolute path a request
// names.
func (s *Session) resolveReview(rec *checkpoint.Session, cp, path string) (string, string, error) {
	if cp == "" {
		cp = defaultCheckpoint(rec)
	}
	if cp == "" || !rec.Has(cp) {
		return "", "", invalid("session %s has no checkpoint %q", s.id, cp)
	}
	if path != "" {
		p, err := s.ws.Resolve(path)
		if err != nil {
			return "", "", invalid("path %q: %v", path, err)
		}
		path = p
	}
	return cp, path, nil
}

// UndoChanges runs changes/undo: the hunks p.HunkIDs (all of the file's when none) of p.Path
// go back to their state before checkpoint p.CheckpointID's prompt, in a safety checkpoint
// of their own. It fails with ErrFailed (-32803) while a running tool may be changing the
// file, with ErrInvalid for an unknown checkpoint or a path it did not change.
func (s *Session) UndoChanges(ctx context.Context, p UndoParams) (UndoResult, error) {
	rec := s.checkpts.rec
	if rec == nil {
		return UndoResult{}, errNoCheckpoints
	}
	if p.Path == "" {
		return UndoResult{}, invalid("path is required")
	}
	cp, path, err := s.resolveReview(rec, p.CheckpointID, p.Path)
	if err != nil {
		return UndoResult{}, err
	}
	if err := s.changes.busy(path); err != nil {
		return UndoResult{}, err
	}
	list, err := s.listChanges(cp)
	if err != nil {
		return UndoResult{}, err
	}
	out := UndoResult{Path: path, Undone: []string{}, Skipped: []SkippedHunk{}}
	i := slices.IndexFunc(list, func(l listed) bool { return l.file.Path == path })
	if i < 0 {
		befores, _ := rec.Befores(cp)
		if !slices.ContainsFunc(befores, func(b checkpoint.Before) bool { return b.Path == path }) {
			return UndoResult{}, invalid("checkpoint %s did not change %s", cp, path)
		}
		for _, id := range p.HunkIDs {
			out.Skipped = append(out.Skipped, SkippedHunk{HunkID: id, Reason: changes.ReasonUnchanged})
		}
		return out, nil
	}
	l := list[i]
	if l.skip != "" {
		ids := p.HunkIDs
		if len(ids) == 0 {
			ids = []string{l.file.Hunks[0].ID}
		}
		for _, id := range ids {
			out.Skipped = append(out.Skipped, SkippedHunk{HunkID: id, Reason: l.skip})
		}
		return out, nil
	}
	res := changes.Undo(path, l.before, l.now, p.HunkIDs, p.Force)
	out.Skipped = res.Skipped
	if len(res.Undone) == 0 {
		return out, nil
	}
	var write checkpoint.Writer
	if s.checkpts.write != nil {
		write = func(path, text string) error { return s.checkpts.write(ctx, path, text) }
	}
	safety := store.NewID()
	reason, err := rec.Undo(safety, cp, path, l.now.Data, checkpoint.UndoSpec{
		Write: res.Write, Create: res.Create, Data: res.Data, Remove: res.Remove, Mode: res.Mode}, write)
	if err != nil {
		return out, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	if rec.Has(safety) {
		prompt := ""
		for _, c := range rec.List() {
			if c.ID == safety {
				prompt = c.Prompt
			}
		}
		s.markCheckpoint(safety, prompt, cp)
		out.SafetyCheckpointID = safety
	}
	if reason != "" {
		for _, id := range res.Undone {
			out.Skipped = append(out.Skipped, SkippedHunk{HunkID: id, Reason: reason})
		}
		return out, nil
	}
	out.Undone = res.Undone
	// What was kept of the file and is no longer a hunk of it is dropped; the undone lines
	// wait for the next prompt's note, in memory and in the file.
	e := changes.Entry{CheckpointID: cp, Path: path, Kept: []string{}}
	if after, err := s.listChanges(cp); err == nil {
		f := changes.File{Path: path}
		if j := slices.IndexFunc(after, func(l listed) bool { return l.file.Path == path }); j >= 0 {
			f = after[j].file
		}
		s.changes.mu.Lock()
		e, _ = s.changes.review.Settle(cp, &f)
		s.changes.mu.Unlock()
	}
	s.changes.mu.Lock()
	s.changes.undone = append(s.changes.undone, res.Lines...)
	s.changes.mu.Unlock()
	s.appendReview(store.Review{Entry: e, Undone: res.Lines})
	s.sendChanges(cp)
	return out, nil
}

// KeepChanges runs changes/keep: the hunks p.HunkIDs of p.Path (all of the file's when none;
// every file's when no path) are marked kept. Nothing on disk changes.
func (s *Session) KeepChanges(p KeepParams) (KeepResult, error) {
	rec := s.checkpts.rec
	if rec == nil {
		return KeepResult{}, errNoCheckpoints
	}
	cp, path, err := s.resolveReview(rec, p.CheckpointID, p.Path)
	if err != nil {
		return KeepResult{}, err
	}
	list, err := s.listChanges(cp)
	if err != nil {
		return KeepResult{}, err
	}
	out := KeepResult{Kept: []string{}}
	for _, l := range list {
		if path != "" && l.file.Path != path {
			continue
		}
		f := l.file
		s.changes.mu.Lock()
		kept, e, write := s.changes.review.Keep(cp, &f, p.HunkIDs)
		s.changes.mu.Unlock()
		out.Kept = append(out.Kept, kept...)
		if write {
			s.appendReview(store.Review{Entry: e})
		}
	}
	s.sendChanges(cp)
	return out, nil
}

// appendReview appends a review entry to the session file, at the conversation's end.
func (s *Session) appendReview(r store.Review) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	f := s.writableLocked()
	if f == nil {
		return
	}
	if _, err := f.Append(store.Entry{Kind: store.KindReview, Timestamp: time.Now().UTC(), Review: &r}); err != nil {
		s.saveFailedLocked(err)
	}
}

// Bounds of the files a call's end carries (event.ToolEnd.Files): the text of at most
// maxCallTexts files of at most maxCallText bytes a side; past those, paths only, at most
// maxCallFiles of them.
const (
	maxCallText  = 64 << 10
	maxCallTexts = 64
	maxCallFiles = 1000
)

// noteBashFiles keeps the files bash call id changed, for its ToolEnd (and, in a subagent,
// for its parent's task call's end too).
func (s *Session) noteBashFiles(rec *checkpoint.Session, id string, changed []checkpoint.Changed) {
	if len(changed) == 0 {
		return
	}
	out := make([]event.FileText, 0, min(len(changed), maxCallFiles))
	texts := 0
	for _, ch := range changed {
		if len(out) == maxCallFiles {
			break
		}
		f := event.FileText{Path: ch.Path}
		if texts < maxCallTexts {
			old, okOld := textOf(rec, ch.Before)
			now, okNew := textOf(rec, ch.After)
			if okOld && okNew {
				f.Old, f.New, f.Known = old, now, true
				texts++
			}
		}
		out = append(out, f)
	}
	c := s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	key := s.id + "/" + id
	c.callFiles[key] = append(c.callFiles[key], out...)
	if sub := s.sub.child; sub != nil {
		// The parent's task call: its key is the parent's (call ids are a session's own).
		pk := sub.parent.id + "/" + sub.toolCallID
		if len(c.callFiles[pk]) < maxCallFiles {
			c.callFiles[pk] = append(c.callFiles[pk], out...)
		}
	}
}

// textOf returns a state's text for a diff: nil for no file; ok is false when it is not
// text within maxCallText, or its content was not kept.
func textOf(rec *checkpoint.Session, st checkpoint.State) (*string, bool) {
	switch st.Kind {
	case "none":
		return nil, true
	case "file":
		if st.Size > maxCallText {
			return nil, false
		}
		data, ok := rec.Content(st)
		if !ok || len(data) > maxCallText || !changes.IsText(data) {
			return nil, false
		}
		t := string(data)
		return &t, true
	}
	return nil, false
}

// takeCallFiles returns (and forgets) the files call id of session sid changed that its
// ToolEnd carries.
func (c *changesState) takeCallFiles(sid, id string) []event.FileText {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := sid + "/" + id
	fs := c.callFiles[key]
	delete(c.callFiles, key)
	return fs
}
