// This file tests CutPoint and ValidCuts: tables, and random transcripts checked against
// brute-force definitions.

package compact_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

func summary() llm.Message { return compact.SummaryMessage("earlier work") }

func TestValidCuts(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		want []int
	}{
		{"empty", nil, []int{0}},
		{"no tools", msgs(u(1), a(1), u(1), a(1)), []int{0, 1, 2, 3, 4}},
		{"a parallel batch of three", msgs(u(1), a(3, "c1", "c2", "c3"), r("c1", 1), r("c2", 1), r("c3", 1), a(1)), []int{0, 1, 5, 6}},
		{"results in another order", msgs(a(3, "c1", "c2", "c3"), r("c3", 1), r("c1", 1), r("c2", 1)), []int{0, 4}},
		{"two batches and a steering message", msgs(u(1), a(1, "c1"), r("c1", 1), u(1), a(2, "c2", "c3"), r("c2", 1), r("c3", 1), a(1)),
			[]int{0, 1, 3, 4, 7, 8}},
		{"a failed message's calls need no result", msgs(u(1), dead(llm.StopError, 1, "c1"), u(1)), []int{0, 1, 2, 3}},
		{"an aborted message's calls need no result", msgs(u(1), dead(llm.StopAborted, 1, "c1"), r("c1", 1), a(1)), []int{0, 1, 2, 3, 4}},
		{"a call never answered (crash) needs no result", msgs(u(1), a(2, "c1", "c2"), r("c1", 1), u(1)), []int{0, 1, 3, 4}},
		{"only the first result of a call counts", msgs(a(1, "c1"), r("c1", 1), r("c1", 1)), []int{0, 2, 3}},
		{"a user message inside a batch", msgs(a(2, "c1", "c2"), r("c2", 1), u(1), r("c1", 1), a(1)), []int{0, 4, 5}},
		{"a result after the next assistant message answers nothing", msgs(a(1, "c1"), a(1), r("c1", 1)), []int{0, 1, 2, 3}},
		{"a run still waiting for its results", msgs(u(1), a(1, "c1")), []int{0, 1, 2}},
		{"a previous summary", msgs(summary(), u(1), a(1, "c1"), r("c1", 1)), []int{0, 1, 2, 4}},
	}
	// A batch of 20 calls (past the size where calls are looked up in a map), answered
	// in reverse order but for b0, then a repeated and a stray result and a steering
	// message: the batch ends with its 19th result, at index 20.
	big := []llm.Message{u(1)}
	var ids []string
	for i := range 20 {
		ids = append(ids, fmt.Sprintf("b%d", i))
	}
	big = append(big, a(20, ids...))
	for i := 19; i >= 1; i-- {
		big = append(big, r(ids[i], 1))
	}
	big = append(big, r("b7", 1), r("zz", 1), u(1))
	tests = append(tests, struct {
		name string
		msgs []llm.Message
		want []int
	}{"a batch of 20 calls", big, []int{0, 1, 21, 22, 23, 24}})

	for _, tt := range tests {
		got := compact.ValidCuts(tt.msgs)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: ValidCuts (-want +got):\n%s", tt.name, d)
		}
		if d := cmp.Diff(bruteValidCuts(tt.msgs), got); d != "" {
			t.Errorf("%s: ValidCuts disagrees with the brute force (-brute +got):\n%s", tt.name, d)
		}
	}
}

func TestCutPoint(t *testing.T) {
	tests := []struct {
		name  string
		msgs  []llm.Message
		keep  int
		first int
		ok    bool
	}{
		{"empty", nil, 10, 0, false},
		{"only a summary", msgs(summary()), 10, 0, false},
		{"everything is worth less than keepRecent", msgs(u(10), a(10), u(10)), 31, 0, false},
		{"keepRecent reached exactly at a user message", msgs(u(10), a(10), u(10), a(10)), 20, 2, true},
		{"one token more moves the cut back one message", msgs(u(10), a(10), u(10), a(10)), 21, 1, true},
		{"keepRecent 0 keeps the last message", msgs(u(10), a(10), u(10), a(10)), 0, 3, true},

		// u, a(c1,c2,c3), r1, r2, r3, a: the budget reached inside the batch moves the cut
		// back to the assistant message that made the calls.
		{"budget reached at the second result", msgs(u(10), a(10, "c1", "c2", "c3"), r("c1", 10), r("c2", 10), r("c3", 10), a(10)), 25, 1, true},
		{"budget reached at the last result", msgs(u(10), a(10, "c1", "c2", "c3"), r("c1", 10), r("c2", 10), r("c3", 10), a(10)), 15, 1, true},
		{"budget reached after the batch", msgs(u(10), a(10, "c1", "c2", "c3"), r("c1", 10), r("c2", 10), r("c3", 10), a(10)), 5, 5, true},

		// A turn too big to keep whole is split at one of its assistant messages.
		{"split turn at its first step", msgs(u(10), a(10, "c1"), r("c1", 100), a(10, "c2"), r("c2", 100), a(10)), 150, 1, true},
		{"split turn at a later step", msgs(u(10), a(10, "c1"), r("c1", 100), a(10, "c2"), r("c2", 100), a(10)), 50, 3, true},

		{"a steering message between batches is a cut", msgs(u(10), a(10, "c1"), r("c1", 10), u(10), a(10, "c2"), r("c2", 10), a(10)), 40, 3, true},
		{"budget reached at the result before a steering message", msgs(u(10), a(10, "c1"), r("c1", 10), u(10), a(10, "c2"), r("c2", 10), a(10)), 45, 1, true},

		{"a previous summary is always summarized", msgs(summary(), u(10), a(10), u(10), a(10)), 20, 3, true},
		{"a previous summary does not count towards keepRecent", msgs(compact.SummaryMessage(text(1000)), u(10), a(10)), 25, 0, false},
		{"a previous summary alone is nothing to summarize: move forward", msgs(summary(), u(10), a(10)), 15, 2, true},

		{"a failed message is a cut, its calls need no results", msgs(u(10), a(10, "c1"), r("c1", 10), u(10), dead(llm.StopError, 10, "c9"), u(10), a(10)), 30, 4, true},
		{"an aborted message's stray result is never kept first", msgs(u(10), dead(llm.StopAborted, 10, "c1"), r("c1", 10), a(10)), 15, 1, true},
		{"a batch with a user message inside is not cut", msgs(u(10), a(10, "c1", "c2"), r("c2", 10), u(10), r("c1", 10), a(10)), 25, 1, true},
		{"a crashed batch's missing result does not block a cut", msgs(u(10), a(10, "c1", "c2"), r("c1", 10), u(10), a(10)), 20, 3, true},

		// When moving back leaves nothing to summarize, the cut moves forward.
		{"a huge first message is summarized", msgs(u(100), a(10, "c1"), r("c1", 10), a(10)), 50, 1, true},
		{"moving forward skips a batch's results", msgs(summary(), a(100, "c1", "c2"), r("c1", 5), r("c2", 5), u(5), a(5)), 50, 4, true},
		{"no cut forward either", msgs(summary(), a(100, "c1"), r("c1", 5)), 50, 0, false},
	}
	for _, tt := range tests {
		first, ok := compact.CutPoint(tt.msgs, tt.keep)
		if first != tt.first || ok != tt.ok {
			t.Errorf("%s: CutPoint(keep %d) = %d, %v; want %d, %v", tt.name, tt.keep, first, ok, tt.first, tt.ok)
		}
		if bf, bok := bruteCutPoint(tt.msgs, tt.keep); bf != first || bok != ok {
			t.Errorf("%s: CutPoint = %d, %v but the brute force says %d, %v", tt.name, first, ok, bf, bok)
		}
	}
}

// bruteValidCuts is ValidCuts by its definition: n is valid when no tool call in msgs[:n]
// (of an assistant message that neither failed nor was aborted) has its first result, the
// first one before the next assistant message, in msgs[n:].
func bruteValidCuts(ms []llm.Message) []int {
	var cuts []int
	for n := 0; n <= len(ms); n++ {
		valid := true
		for j := 0; j < n && valid; j++ {
			if ms[j].Role != llm.RoleAssistant || ms[j].StopReason == llm.StopError || ms[j].StopReason == llm.StopAborted {
				continue
			}
			for _, call := range ms[j].ToolCalls() {
				for k := j + 1; k < len(ms) && ms[k].Role != llm.RoleAssistant; k++ {
					if ms[k].Role == llm.RoleToolResult && ms[k].ToolCallID == call.ID {
						if k >= n {
							valid = false
						}
						break
					}
				}
			}
		}
		if valid {
			cuts = append(cuts, n)
		}
	}
	return cuts
}

// bruteCutPoint is CutPoint by its definition: find where the kept messages (after a
// previous summary) reach keep tokens, then take the last good cut at or before it that
// leaves something to summarize, else the first good cut after it. A good cut is a valid
// cut before a message that is not a tool result.
func bruteCutPoint(ms []llm.Message, keep int) (int, bool) {
	start := 0
	if len(ms) > 0 {
		if _, ok := compact.IsSummaryMessage(&ms[0]); ok {
			start = 1
		}
	}
	at, sum := -1, 0 // sum is the worth of ms[k:]
	for k := len(ms) - 1; k >= start; k-- {
		sum += compact.EstimateTokens(&ms[k])
		if sum >= keep {
			at = k
			break
		}
	}
	if at < 0 {
		return 0, false
	}
	valid := bruteValidCuts(ms)
	good := func(k int) bool { return k < len(ms) && ms[k].Role != llm.RoleToolResult && slices.Contains(valid, k) }
	for k := at; k > start; k-- {
		if good(k) {
			return k, true
		}
	}
	for k := at + 1; k < len(ms); k++ {
		if good(k) {
			return k, true
		}
	}
	return 0, false
}

// randomTranscript builds a transcript as a session might hold it, with the odd cases
// thrown in: a previous summary, steering messages, parallel batches with results in any
// order, failed and aborted messages, missing, repeated and stray results, and a user
// message inside a batch.
func randomTranscript(rng *rand.Rand) []llm.Message {
	var ms []llm.Message
	size := func() int { return rng.IntN(60) }
	if rng.IntN(3) == 0 {
		ms = append(ms, compact.SummaryMessage(text(size())))
	}
	call := 0
	for turns := rng.IntN(8); turns >= 0; turns-- {
		ms = append(ms, u(size()))
		for steps := rng.IntN(4); steps >= 0; steps-- {
			var ids []string
			for n := rng.IntN(4); n > 0; n-- {
				call++
				ids = append(ids, fmt.Sprintf("c%d", call))
			}
			switch rng.IntN(10) {
			case 0:
				ms = append(ms, dead(llm.StopError, size()+len(ids), ids...))
				continue
			case 1:
				ms = append(ms, dead(llm.StopAborted, size()+len(ids), ids...))
				if len(ids) > 0 && rng.IntN(2) == 0 {
					ms = append(ms, r(ids[0], size())) // stray
				}
				continue
			}
			ms = append(ms, a(size()+len(ids), ids...))
			order := rng.Perm(len(ids))
			for i, p := range order {
				if rng.IntN(15) == 0 {
					continue // never answered
				}
				if i > 0 && rng.IntN(15) == 0 {
					ms = append(ms, u(size())) // a user message inside the batch
				}
				ms = append(ms, r(ids[p], size()))
				if rng.IntN(20) == 0 {
					ms = append(ms, r(ids[p], size())) // repeated
				}
			}
			if rng.IntN(20) == 0 {
				ms = append(ms, r("nobody", size())) // answers no call
			}
			if rng.IntN(4) == 0 {
				ms = append(ms, u(size())) // steering
			}
		}
	}
	return ms
}

// Over random transcripts, ValidCuts and CutPoint agree with their brute-force
// definitions, and a kept tail never starts with a tool result nor holds the result of a
// summarized call.
func TestCutsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2024))
	var cut, kept, forward int // how often each case came up
	defer func() {
		if cut < 500 || kept < 100 || forward < 20 {
			t.Errorf("the random transcripts exercise too little: %d cuts, %d with nothing to cut, %d moved forward", cut, kept, forward)
		}
	}()
	for i := range 3000 {
		ms := randomTranscript(rng)
		if d := cmp.Diff(bruteValidCuts(ms), compact.ValidCuts(ms)); d != "" {
			t.Fatalf("transcript %d: ValidCuts (-brute +got):\n%s\n%s", i, d, describe(ms))
		}
		keep := rng.IntN(400)
		first, ok := compact.CutPoint(ms, keep)
		bf, bok := bruteCutPoint(ms, keep)
		if first != bf || ok != bok {
			t.Fatalf("transcript %d, keep %d: CutPoint = %d, %v; brute force %d, %v\n%s", i, keep, first, ok, bf, bok, describe(ms))
		}
		if !ok {
			kept++
			continue
		}
		cut++
		tail := 0
		for _, m := range ms[first:] {
			tail += compact.EstimateTokens(&m)
		}
		if tail < keep {
			forward++
		}
		if first <= 0 || first >= len(ms) || ms[first].Role == llm.RoleToolResult {
			t.Fatalf("transcript %d: CutPoint = %d keeps a tail starting with %s\n%s", i, first, ms[first].Role, describe(ms))
		}
		if !slices.Contains(compact.ValidCuts(ms), first) {
			t.Fatalf("transcript %d: CutPoint = %d is not a valid cut\n%s", i, first, describe(ms))
		}
		if _, isSummary := compact.IsSummaryMessage(&ms[0]); isSummary && first == 1 {
			t.Fatalf("transcript %d: CutPoint = 1 summarizes only the previous summary", i)
		}
	}
}

func describe(ms []llm.Message) string {
	s := ""
	for i, m := range ms {
		s += fmt.Sprintf("%d %s %s tokens=%d calls=%v result=%s\n", i, m.Role, m.StopReason, compact.EstimateTokens(&m), m.ToolCalls(), m.ToolCallID)
	}
	return s
}
