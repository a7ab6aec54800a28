// Package rewind holds what a session's rewind decides around the work package checkpoint
// does: whether a request can be done and what it takes back (Check, Files, Conversation),
// where each checkpoint sits in the session file (Marks), the entries a rewind appends to
// it (MarkEntry, Entry), and the answer (Result); and it wraps the tools that change files so
// that what they change is kept first (Recorder.Wrap, record.go). It keeps no files and asks
// no one. The entry point is Check.
//
// This file holds the request's check, the marks, the entries and the answer.
package rewind

import (
	"fmt"
	"sync"
	"time"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/store"
)

// Check returns why a rewind to checkpoint id, restoring restore, cannot be asked for ("" when
// it can): the id is required, and restore is "files", "conversation" or "both".
func Check(id, restore string) string {
	switch {
	case id == "":
		return "checkpointId is required"
	case restore != "files" && restore != "conversation" && restore != "both":
		return fmt.Sprintf(`restore must be "files", "conversation" or "both", not %q`, restore)
	}
	return ""
}

// Files reports whether a rewind restoring restore (checked) takes the files back.
func Files(restore string) bool { return restore != "conversation" }

// Conversation reports whether a rewind restoring restore (checked) takes the conversation
// back.
func Conversation(restore string) bool { return restore != "files" }

// Marks maps each checkpoint of a session to its mark's entry id in the session file. The
// zero value is empty and ready; it is safe for concurrent use.
type Marks struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]string
}

// Reset makes the marks those of m (a loaded session's, store.Marks), which it keeps.
func (ms *Marks) Reset(m map[string]string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.m = m
}

// Set notes checkpoint id's mark.
func (ms *Marks) Set(id, entryID string) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[string]string{}
	}
	ms.m[id] = entryID
}

// Of returns checkpoint id's mark, "" when it has none (the session is not saved, or the
// checkpoint is not in the session file).
func (ms *Marks) Of(id string) string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.m[id]
}

// maxMarkPrompt is how many characters of a prompt a mark keeps.
const maxMarkPrompt = 200

// MarkEntry returns the session file's mark of checkpoint id, opened at now for prompt (its
// first 200 characters are kept), or for a rewind to the checkpoint safety (a rewind's own
// checkpoint, which can be rewound; "" for a prompt's).
func MarkEntry(id, prompt, safety string, now time.Time) store.Entry {
	if r := []rune(prompt); len(r) > maxMarkPrompt {
		prompt = string(r[:maxMarkPrompt])
	}
	return store.Entry{Kind: store.KindCheckpoint, Timestamp: now.UTC(),
		Checkpoint: &store.Checkpoint{ID: id, Prompt: prompt, Safety: safety}}
}

// Entry returns the session file's entry of a rewind of the conversation to checkpoint id,
// restoring restore, at now: hung from the checkpoint's mark, so that the branch through it
// leaves out everything after that point (every line stays in the file).
func Entry(id, mark, restore string, now time.Time) store.Entry {
	return store.Entry{Kind: store.KindRewind, ParentID: mark, Timestamp: now.UTC(),
		Rewind: &store.Rewind{CheckpointID: id, Restore: restore}}
}

// PromptOf returns the prompt of checkpoint id among list, "" when it is not there.
func PromptOf(list []checkpoint.Info, id string) string {
	for _, c := range list {
		if c.ID == id {
			return c.Prompt
		}
	}
	return ""
}

// Result is what session/rewind answers.
type Result struct {
	Restored           []string             `json:"restored"`
	Removed            []string             `json:"removed"`
	Skipped            []checkpoint.Skipped `json:"skipped"`
	SafetyCheckpointID string               `json:"safetyCheckpointId"`
}

// ResultOf is the answer of a rewind that did res and opened the checkpoint safety first.
func ResultOf(res checkpoint.Result, safety string) Result {
	return Result{Restored: res.Restored, Removed: res.Removed, Skipped: res.Skipped, SafetyCheckpointID: safety}
}

// CheckpointParams are the params of checkpoints/list and checkpoints/diff (native) and of
// their ACP extension methods: the faces decode them alike.
type CheckpointParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
}

// Params are session/rewind's params (native, and _pid/session/rewind on ACP).
type Params struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
	Restore      string `json:"restore"`
	Force        bool   `json:"force"`
}
