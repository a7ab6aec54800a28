// This file asks a model for a compaction's summary of what the model sees: the messages
// before the cut point, the summary the view began with carried on (Summarize).

package compact

import (
	"context"
	"errors"
	"fmt"

	"github.com/pid-agent/pid/llm"
)

// Summarized is what Summarize got of the model.
type Summarized struct {
	// Text is the summary.
	Text string
	// Cut is the index, in the view, of the first message kept word for word.
	Cut int
	// Previous is the summary the view began with (an earlier compaction's); "" when none.
	Previous string
	// Usage is what the summary call reported: nil when no call was made or it reported none.
	Usage *llm.Usage
}

// Summarize asks p for the summary of the messages of view (what the model sees) before its
// cut point (CutPoint, keeping at least keepRecent tokens word for word), with instructions
// (SummaryRequest). It fails when there is nothing to compact yet, when ctx ended (its error
// wrapped), or as SummaryText does; the result's Cut, Previous and Usage are set even then
// once they are known.
//
// Contract: p's contract; it makes one call at most.
func Summarize(ctx context.Context, p llm.Provider, view []llm.Message, keepRecent int, instructions string) (Summarized, error) {
	first, ok := CutPoint(view, keepRecent)
	if !ok {
		return Summarized{}, errors.New("there is nothing to compact yet: every message is among the most recent ones kept")
	}
	out := Summarized{Cut: first}
	if len(view) > 0 {
		out.Previous, _ = IsSummaryMessage(&view[0])
	}
	answer := p.Stream(ctx, SummaryRequest(view[:first], out.Previous, instructions), nil)
	out.Usage = answer.Usage
	text, err := SummaryText(answer)
	if err != nil {
		if ctx.Err() != nil {
			return out, fmt.Errorf("the compaction was cancelled: %w", ctx.Err())
		}
		return out, err
	}
	out.Text = text
	return out, nil
}
