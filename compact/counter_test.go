package compact

import (
	"math/rand/v2"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// The counter agrees with ContextTokensSince on growing transcripts, with and without a
// summary in front, for every since; Since is the estimate of the messages it counts.
func TestCounterAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var transcript []llm.Message
	var c Counter
	summary := SummaryMessage("## Goal\nsomething")
	for step := 0; step < 300; step++ {
		m := llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(string(make([]byte, r.IntN(400))))}}
		if r.IntN(2) == 0 {
			m.Role = llm.RoleAssistant
			if r.IntN(3) > 0 {
				m.Usage = &llm.Usage{Input: r.IntN(5000), Output: r.IntN(100)}
			}
			if r.IntN(10) == 0 {
				m.StopReason = llm.StopError
			}
		}
		transcript = append(transcript, m)
		c.Update(transcript)
		from := r.IntN(len(transcript) + 1)
		since := from + r.IntN(len(transcript)-from+1)
		view := append([]llm.Message{summary}, transcript[from:]...)
		want := ContextTokensSince(view, since-from+1)
		if got := c.Tokens(EstimateTokens(&summary), from, since); got != want {
			t.Fatalf("step %d from %d since %d: %d, want %d", step, from, since, got, want)
		}
		if got, want := c.Tokens(0, 0, 0), ContextTokens(transcript); got != want {
			t.Fatalf("step %d whole: %d, want %d", step, got, want)
		}
		added := 0
		for i := from; i < len(transcript); i++ {
			added += EstimateTokens(&transcript[i])
		}
		if got := c.Since(from); got != added {
			t.Fatalf("step %d: Since(%d) = %d, want the estimate of the messages from there, %d", step, from, got, added)
		}
	}
}
