// This file connects a session to its checkpoints (package checkpoint): each prompt opens
// one, marked in the session file right before the prompt's user message; write, edit and
// bash are wrapped so that what they change is kept first; and Rewind takes files and the
// conversation back to a checkpoint.

package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/rewind"
	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// checkpointState is the session's checkpoints. rec and write are set by build and never
// reassigned.
type checkpointState struct {
	// rec is nil when checkpoints are off or could not be set up (reported).
	rec *checkpoint.Session
	// write is the editor's fs/write_text_file, when it declared one: a rewind writes
	// through it so that open buffers follow.
	write func(ctx context.Context, path, text string) error
	// shared is set for a subagent, whose rec is its parent's (opened and closed there).
	shared bool
	// marks are where the checkpoints sit in the session file.
	marks rewind.Marks
}

// openCheckpoints sets up the host's checkpoint store, unless the user settings turn
// checkpoints off. A store that cannot be used is reported; pid then runs without.
func (h *Host) openCheckpoints() {
	var c settings.Checkpoints
	if h.loader != nil {
		c = h.loader.Checkpoints()
	}
	st, err := rewind.OpenStore(c.Disabled, c.MaxBytes)
	if err != nil {
		st = nil
		h.opts.Report(fmt.Sprintf("checkpoints are not available (a rewind cannot take back what the tools change): %v", err), false)
	}
	h.checkpoints = st
}

// deleteCheckpoints forgets a deleted session's checkpoints.
func (h *Host) deleteCheckpoints(id string) {
	if h.checkpoints != nil {
		h.checkpoints.Delete(id)
	}
}

// openCheckpoints opens the session's checkpoints (a loaded session's come back with their
// marks). Called by build.
func (s *Session) openCheckpoints(r *restoring, files *EditorFiles) {
	if r != nil {
		s.checkpts.marks.Reset(r.marks)
	}
	if files != nil {
		s.checkpts.write = files.Write
	}
	if c := s.sub.child; c != nil && c.worktree != nil {
		return // its writes are in its worktree: the merge records them in the parent's
	}
	if c := s.sub.child; c != nil {
		// A subagent records into its parent's checkpoint: rewinding the parent's prompt
		// takes back what its task calls' children changed too.
		s.checkpts.rec, s.checkpts.shared = c.parent.checkpts.rec, true
		return
	}
	if s.host.checkpoints == nil {
		return
	}
	rec, err := s.host.checkpoints.Session(s.id, s.ws)
	if err != nil {
		s.host.opts.Report(fmt.Sprintf("session %s has no checkpoints (a rewind cannot take back what its tools change): %v", s.id, err), false)
		return
	}
	s.checkpts.rec = rec
}

// closeCheckpoints closes the session's checkpoints.
func (s *Session) closeCheckpoints() {
	if s.checkpts.rec != nil && !s.checkpts.shared {
		s.checkpts.rec.Close()
	}
}

// recorded wraps the built-in tools that change files so that their changes are kept in
// the open checkpoint (rewind.Recorder.Wrap).
func (s *Session) recorded(t toolexec.Tool) toolexec.Tool {
	return rewind.Recorder{
		Rec:      func() *checkpoint.Session { return s.checkpts.rec },
		Child:    func() bool { return s.sub.child != nil },
		Resolve:  s.ws.Resolve,
		Conflict: s.conflict, // subagent.go
		Running:  func(path string) func() { return s.changes.Running(path) },
		NoteBash: s.noteBashFiles,
	}.Wrap(t)
}

// checkpointPrompt opens the checkpoint of a prompt and marks it in the session file, right
// before the prompt's user message; it returns its id ("" when none) and the function that
// closes it. Called by Prompt.
func (s *Session) checkpointPrompt(prompts []llm.Message) (string, func()) {
	rec := s.checkpts.rec
	if rec == nil || s.checkpts.shared {
		return "", func() {}
	}
	id := store.NewID()
	text := prompt.TextOf(prompts)
	if err := rec.Begin(id, text); err != nil {
		s.face.Warn(s, fmt.Sprintf("this prompt has no checkpoint (a rewind cannot take back what it changes): %v", err))
		return "", func() {}
	}
	s.markCheckpoint(id, text, "")
	if s.builtin[tools.NameBash] {
		rec.Warm()
	}
	return id, rec.End
}

// markCheckpoint appends checkpoint id's mark to the session file, at the conversation's
// current end, and remembers its entry.
func (s *Session) markCheckpoint(id, prompt, safety string) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	f := s.writableLocked()
	if f == nil {
		return
	}
	ids, err := f.Append(rewind.MarkEntry(id, prompt, safety, time.Now()))
	if err != nil {
		s.saveFailedLocked(err)
		return
	}
	s.checkpts.marks.Set(id, ids[0])
}

// CheckpointInfo is one checkpoint of a session, as checkpoints/list shows it.
type CheckpointInfo = checkpoint.Info

// FileDiff is one file's change from a checkpoint to now, as checkpoints/diff shows it.
type FileDiff = checkpoint.FileDiff

// SkippedFile is a file a rewind left as it is, and why.
type SkippedFile = checkpoint.Skipped

// errNoCheckpoints is the error of the checkpoint requests of a session without them.
var errNoCheckpoints = fmt.Errorf("%w: checkpoints (the user settings turn them off, or they could not be set up: see pid's log)", ErrUnavailable)

// Checkpoints returns the session's checkpoints, oldest first.
func (s *Session) Checkpoints() ([]CheckpointInfo, error) {
	if s.checkpts.rec == nil {
		return nil, errNoCheckpoints
	}
	return s.checkpts.rec.List(), nil
}

// CheckpointDiff returns the diffs from the state before checkpoint id's prompt to the
// files as they are now.
func (s *Session) CheckpointDiff(id string) ([]FileDiff, error) {
	if id == "" {
		return nil, invalid("checkpointId is required")
	}
	if s.checkpts.rec == nil {
		return nil, errNoCheckpoints
	}
	out, err := s.checkpts.rec.Diff(id)
	if errors.Is(err, checkpoint.ErrUnknown) {
		return nil, invalid("session %s has no checkpoint %q", s.id, id)
	}
	return out, err
}

// RewindResult is what session/rewind answers.
type RewindResult = rewind.Result

// StartRewind checks a rewind of the session to checkpoint id, of its files ("files"), its
// conversation ("conversation") or both ("both"), and claims the session for it (as Begin
// does): it fails with ErrBusy while a prompt runs, and with ErrInvalid for an unknown
// checkpoint or restore. The function it returns does the rewind and releases the session;
// it must be called exactly once. A checkpoint of the rewind's own is opened first, so that
// the rewind can be rewound.
func (s *Session) StartRewind(id, restore string, force bool) (func(ctx context.Context) (RewindResult, error), error) {
	if why := rewind.Check(id, restore); why != "" {
		return nil, invalid("%s", why)
	}
	rec := s.checkpts.rec
	if rec == nil {
		return nil, errNoCheckpoints
	}
	if !rec.Has(id) {
		return nil, invalid("session %s has no checkpoint %q", s.id, id)
	}
	mark := s.checkpts.marks.Of(id)
	if rewind.Conversation(restore) && mark == "" {
		return nil, fmt.Errorf("%w: the conversation cannot be rewound to checkpoint %s: the session file does not have its place (the session is not saved)", ErrFailed, id)
	}
	if err := s.Begin(); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (RewindResult, error) {
		defer s.End()
		return s.rewind(ctx, rec, id, mark, restore, force)
	}, nil
}

// Rewind is StartRewind and its work, at once.
func (s *Session) Rewind(ctx context.Context, id, restore string, force bool) (RewindResult, error) {
	work, err := s.StartRewind(id, restore, force)
	if err != nil {
		return RewindResult{}, err
	}
	return work(ctx)
}

// rewind does a rewind StartRewind checked.
func (s *Session) rewind(ctx context.Context, rec *checkpoint.Session, id, mark, restore string, force bool) (RewindResult, error) {
	var write checkpoint.Writer
	if s.checkpts.write != nil {
		write = func(path, text string) error { return s.checkpts.write(ctx, path, text) }
	}
	safety := store.NewID()
	res, err := rec.Rewind(id, safety, rewind.Files(restore), force, write)
	if err != nil {
		return RewindResult{}, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	s.markCheckpoint(safety, rewind.PromptOf(rec.List(), safety), id)
	out := rewind.ResultOf(res, safety)
	if rewind.Conversation(restore) {
		if err := s.rewindConversation(id, mark, restore); err != nil {
			return out, err
		}
	}
	return out, nil
}

// rewindConversation makes the session go on from checkpoint id's mark: a rewind entry
// hung from the mark is appended (every line stays in the file), and the session's
// transcript becomes the file's branch through it.
func (s *Session) rewindConversation(id, mark, restore string) error {
	s.saved.mu.Lock()
	f := s.writableLocked()
	if f == nil {
		s.saved.mu.Unlock()
		return fmt.Errorf("%w: the conversation cannot be rewound: the session is no longer saved", ErrFailed)
	}
	_, err := f.Append(rewind.Entry(id, mark, restore, time.Now()))
	if err != nil {
		s.saveFailedLocked(err)
		s.saved.mu.Unlock()
		return fmt.Errorf("%w: the conversation could not be rewound: %v", ErrFailed, err)
	}
	s.saved.mu.Unlock()
	loaded, err := s.host.files.Read(s.id)
	if err != nil {
		return fmt.Errorf("%w: the conversation was rewound in the session file, but reading it back failed (load the session again): %v", ErrFailed, err)
	}
	r := &restoring{mode: loaded.Header.Mode}
	var cfg Config
	if err := replay(r, &cfg, store.SourceOrder(loaded.Branch), history.Notes(loaded.Header, loaded.Branch)); err != nil {
		return err
	}
	if err := s.agent.Restore(r.transcript); err != nil {
		return fmt.Errorf("%w: %v", ErrFailed, err)
	}
	s.saved.mu.Lock()
	s.saved.entryIDs, s.saved.compactions, s.saved.modelChanges, s.saved.presaved = r.entryIDs, r.compactions, r.modelChanges, nil
	s.saved.mu.Unlock()
	// The model is told what it was told on that branch, and the mode the session is in
	// now goes on from there.
	s.restoreNotes(r.notes, history.ToldStart(loaded.Header), r.mode)
	s.keepMode()
	s.subInstr.Reset(r.transcript[min(history.KeptFrom(r.compactions), len(r.transcript)):])
	// What the model saw was made for the transcript before: it is made again.
	s.compacting.tried, s.compacting.lastTranscript = 0, nil
	s.compacting.view.made, s.compacting.view.compactions, s.compacting.view.covered, s.compacting.view.msgs = false, 0, 0, nil
	return nil
}

// CheckpointParams are the params of checkpoints/list and checkpoints/diff (native) and of
// their ACP extension methods: the faces decode them alike.
type CheckpointParams = rewind.CheckpointParams

// RewindParams are session/rewind's params (native, and _pid/session/rewind on ACP).
type RewindParams = rewind.Params
