// Package history turns a session's saved entries (package store) into what the session
// goes on from, and back: Replay reads a branch of a session file into a transcript, its
// compactions, model changes and mode notes; Items lists a transcript with its compactions
// the way session/load and session/fork count them; Snapshot writes a live session out as
// a file would hold it, for a fork; ForkCounts says where a fork may cut; Notes finds which
// messages carry a mode note. It is pure: it reads and writes no file, and knows no session.
//
// This file holds the records a session keeps of its history, and its items.
package history

import (
	"encoding/json"
	"time"

	"github.com/pid-agent/pid/llm"
)

// Compaction reasons.
const (
	ReasonManual    = "manual"
	ReasonThreshold = "threshold"
	ReasonOverflow  = "overflow"
)

// Compaction is one compaction of the transcript: the messages before FirstKept (an index
// into the transcript) were summarized; it happened after the first At messages.
type Compaction struct {
	// At is the number of messages in the transcript when it happened.
	At           int
	FirstKept    int
	Summary      string
	TokensBefore int
	Reason       string
	// EntryID is its entry's id in the session's file ("" when it was not saved).
	EntryID string
	Time    time.Time
}

// ModelChange is a change of a session's model: the model Config (as saved) made the calls
// after the first At messages of the transcript.
type ModelChange struct {
	At     int
	Config json.RawMessage
	// EntryID is its entry's id in the session's file ("" for a live one).
	EntryID string
}

// Item is one entry of a session as session/load and session/fork list it: a transcript
// message, or a compaction at the place it happened.
type Item struct {
	Message    *llm.Message
	Compaction *CompactionItem
}

// CompactionItem is a compaction as listed among a session's items.
type CompactionItem struct {
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokensBefore"`
	// FirstKeptIndex is the index, among the session's items, of the first message the
	// model still sees after the summary.
	FirstKeptIndex int    `json:"firstKeptIndex"`
	Reason         string `json:"reason,omitempty"`
	Timestamp      int64  `json:"timestamp"`
}

// MarshalJSON writes a message as itself and a compaction as {"role":"compaction", ...}.
func (it Item) MarshalJSON() ([]byte, error) {
	if it.Message != nil {
		return it.Message.AppendJSON(nil)
	}
	type shown struct {
		Role string `json:"role"`
		CompactionItem
	}
	return json.Marshal(shown{"compaction", *it.Compaction})
}

// Items interleaves a transcript and its compactions (in the order they happened) into
// items: each compaction before the first message after it.
func Items(transcript []llm.Message, comps []Compaction) []Item {
	out := make([]Item, 0, len(transcript)+len(comps))
	ci := 0
	for i := range transcript {
		for ci < len(comps) && comps[ci].At <= i {
			out = append(out, compactionItem(comps, ci))
			ci++
		}
		out = append(out, Item{Message: &transcript[i]})
	}
	for ; ci < len(comps); ci++ {
		out = append(out, compactionItem(comps, ci))
	}
	return out
}

// ItemIndex returns the index among the items of transcript message i: i plus the
// compactions placed before it.
func ItemIndex(comps []Compaction, i int) int {
	n := i
	for _, c := range comps {
		if c.At <= i {
			n++
		}
	}
	return n
}

func compactionItem(comps []Compaction, ci int) Item {
	c := comps[ci]
	return Item{Compaction: &CompactionItem{Summary: c.Summary, TokensBefore: c.TokensBefore,
		FirstKeptIndex: ItemIndex(comps, c.FirstKept), Reason: c.Reason, Timestamp: c.Time.UnixMilli()}}
}

// KeptFrom returns the index of the first transcript message the model sees after the
// compactions comps (0 for none).
func KeptFrom(comps []Compaction) int {
	if n := len(comps); n > 0 {
		return comps[n-1].FirstKept
	}
	return 0
}
