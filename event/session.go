// This file holds the events about a session as a whole rather than one step of a run: its
// plan changed (PlanUpdate), and how much of the model's context it fills and what it has
// cost (UsageUpdate). They come from the session layer, on the loop's goroutine, in the
// run's order: PlanUpdate right after the ToolEnd of the todo_write call that changed the
// plan, UsageUpdate right after the MessageEnd of each assistant message (and after a
// compaction, whose summary is a model call too), and the files a prompt changed so far
// (ChangesUpdate).

package event

// PlanEntry is one entry of a session's plan. Status is "pending", "in_progress" or
// "completed"; Priority "high", "medium" or "low".
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// PlanUpdate carries the session's whole plan each time it changes (an empty list clears
// it). Entries is the sender's: read it during the call only.
type PlanUpdate struct{ Entries []PlanEntry }

// Cost is an amount of money: the session's total cost so far.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// UsageUpdate says how full the model's context is: Used is the size, in tokens, of the
// context the next model call will send (from the provider's reported usage, estimated
// where it reported none), Size the model's context window; Cost, when the model has a
// price, the session's total cost so far (nil otherwise).
type UsageUpdate struct {
	Used int
	Size int
	Cost *Cost
}

// CompactionKept says what a compaction kept besides its summary, word for word, for the
// model: UserMessage whether the latest user message (the request being worked on) is
// quoted after the summary, PlanEntries how many entries of the plan are, and Files the
// paths of the files read and changed in the part compacted away.
type CompactionKept struct {
	UserMessage bool     `json:"userMessage"`
	PlanEntries int      `json:"planEntries"`
	Files       []string `json:"files"`
}

// ChangedFile is one file of a ChangesUpdate: its change ("added", "modified" or
// "deleted"), the lines its hunks add and remove, and how many of its hunks the person has
// not kept yet.
type ChangedFile struct {
	Path    string `json:"path"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Pending int    `json:"pending"`
}

// ChangesUpdate carries the whole list of the files a prompt changed so far (CheckpointID is
// its checkpoint), each time it changes: right after the ToolEnd of a call that changed
// files (a subagent's calls included: the parent's session sends it, with its own
// checkpoint), and after an undo or a keep of the review. Files is the sender's: read it
// during the call only.
type ChangesUpdate struct {
	CheckpointID string
	Files        []ChangedFile
}

func (PlanUpdate) isEvent()    {}
func (UsageUpdate) isEvent()   {}
func (ChangesUpdate) isEvent() {}
