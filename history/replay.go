// This file reads a branch of a session file into what the session goes on from (Replay),
// writes a live session out as a branch (Snapshot), and says where a fork may cut.

package history

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/store"
)

// Replayed is what a branch of a session file holds.
type Replayed struct {
	Transcript []llm.Message
	// EntryIDs are the transcript's messages' entry ids, in order.
	EntryIDs    []string
	Compactions []Compaction
	// Calls is the number of model calls recorded (assistant messages, and calls the
	// provider refused as too long) since the last model change: a scripted model goes on
	// with that turn. Summaries is the number of compactions since then: its summaries go
	// on from there.
	Calls, Summaries int
	// ModelChanges are the branch's model changes, in order (the session goes on with the
	// last one).
	ModelChanges []ModelChange
	// Mode is the branch's last mode entry's mode, when ModeSaved.
	Mode      string
	ModeSaved bool
	// Notes maps the transcript index of each message that carries a mode note to the
	// note's mode; nil for none.
	Notes map[int]string
}

// Replay reads the entries of a branch: its messages (with their mode notes, named by
// entry id in notes), compactions, model changes and mode changes.
func Replay(branch []store.Entry, notes map[string]string) Replayed {
	var r Replayed
	index := map[string]int{} // entry id -> transcript index
	for _, e := range branch {
		switch e.Kind {
		case store.KindMessage:
			if e.Message == nil {
				continue
			}
			if mode, ok := notes[e.ID]; ok {
				if r.Notes == nil {
					r.Notes = map[int]string{}
				}
				r.Notes[len(r.Transcript)] = mode
			}
			index[e.ID] = len(r.Transcript)
			r.Transcript = append(r.Transcript, *e.Message)
			r.EntryIDs = append(r.EntryIDs, e.ID)
			if e.Message.Role == llm.RoleAssistant {
				r.Calls++
			}
		case store.KindMode:
			r.Mode, r.ModeSaved = e.Mode, true
		case store.KindModel:
			// A model change: the session goes on with the last one, a scripted model
			// from its own first turn on.
			r.Calls, r.Summaries = 0, 0
			r.ModelChanges = append(r.ModelChanges, ModelChange{At: len(r.Transcript), Config: e.Model, EntryID: e.ID})
		case store.KindCompaction:
			if e.Compaction == nil {
				continue
			}
			r.Summaries++
			if e.Compaction.Reason == ReasonOverflow {
				// The model call the provider refused as too long is in no message.
				r.Calls++
			}
			kept, ok := index[e.Compaction.FirstKeptID]
			if !ok {
				kept = len(r.Transcript)
			}
			r.Compactions = append(r.Compactions, Compaction{At: len(r.Transcript), FirstKept: kept,
				Summary: e.Compaction.Summary, TokensBefore: e.Compaction.TokensBefore, Reason: e.Compaction.Reason,
				EntryID: e.ID, Time: e.Timestamp})
		}
	}
	return r
}

// Snapshot returns a live session as a file would hold it, for a fork: header, then its
// items (transcript with its compactions comps), with its model changes where they
// happened, and the entry ids of the messages that carry a mode note (notes: transcript
// index to mode). Items are named m<index among the items>, model changes model<n>.
func Snapshot(header store.Header, transcript []llm.Message, comps []Compaction, changes []ModelChange, notes map[int]string) (*store.Loaded, map[string]string) {
	l := &store.Loaded{Header: header}
	items := Items(transcript, comps)
	named := map[string]string{}
	msgIndex := 0
	for i, it := range items {
		if it.Message != nil {
			if m, ok := notes[msgIndex]; ok {
				named[fmt.Sprintf("m%d", i)] = m
			}
			msgIndex++
		}
	}
	ci, msgs := 0, 0
	addChanges := func(upTo int) {
		for ; ci < len(changes) && changes[ci].At <= upTo; ci++ {
			l.Branch = append(l.Branch, store.Entry{Kind: store.KindModel, ID: fmt.Sprintf("model%d", ci), Model: changes[ci].Config})
		}
	}
	for i, it := range items {
		switch {
		case it.Message != nil:
			addChanges(msgs)
			l.Branch = append(l.Branch, store.Entry{Kind: store.KindMessage, ID: fmt.Sprintf("m%d", i), Message: it.Message})
			msgs++
		case it.Compaction != nil:
			// FirstKeptID names the entry of the first kept message, by its place.
			l.Branch = append(l.Branch, store.Entry{Kind: store.KindCompaction, ID: fmt.Sprintf("m%d", i),
				Compaction: &store.Compaction{Summary: it.Compaction.Summary, TokensBefore: it.Compaction.TokensBefore,
					Reason: it.Compaction.Reason, FirstKeptID: fmt.Sprintf("m%d", it.Compaction.FirstKeptIndex)}})
		}
	}
	addChanges(len(transcript))
	return l, named
}

// ForkCounts returns the item counts a fork of branch may take: those whose messages leave
// no tool call without its result.
func ForkCounts(branch []store.Entry) []int {
	var msgs []llm.Message
	msgCount := []int{0} // messages among the first n items
	for _, e := range branch {
		if !store.IsItem(e) {
			continue
		}
		if e.Kind == store.KindMessage {
			msgs = append(msgs, *e.Message)
		}
		msgCount = append(msgCount, len(msgs))
	}
	cuts := compact.ValidCuts(msgs)
	var out []int
	for n := range msgCount {
		if slices.Contains(cuts, msgCount[n]) {
			out = append(out, n)
		}
	}
	return out
}

// Nearest returns the valid counts just below and just above n, as text (none: nil).
func Nearest(valid []int, n int) (below, above []string) {
	for _, v := range valid {
		if v < n {
			below = []string{strconv.Itoa(v)}
		} else if v > n && above == nil {
			above = []string{strconv.Itoa(v)}
		}
	}
	return below, above
}
