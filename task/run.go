// This file holds what a child's run is followed by and summed up with, the cap on task
// calls per message, and the "subagents" settings.

package task

import (
	"fmt"
	"strings"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/internal/title"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// The subagents' defaults.
const (
	DefaultMaxConcurrent = 4
	DefaultMaxTurns      = 50
)

// MaxCalls is how many task calls of one model message run; the others get an error
// result, so that a model cannot start (nor put to the person) a thousand children at once.
const MaxCalls = 16

// Settings are the "subagents" settings: how many children run at once, and how many turns
// one may take.
type Settings struct {
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	MaxTurns      int `json:"maxTurns,omitempty"`
	// Isolation says when a writing child works in a git worktree of its own: "auto" (the
	// default: when two or more writing task calls run in one batch), "worktree" (always)
	// or "none" (never).
	Isolation string `json:"isolation,omitempty"`
}

// The Settings.Isolation values.
const (
	IsolationAuto     = "auto"
	IsolationWorktree = "worktree"
	IsolationNone     = "none"
)

// Check reports an isolation that is none of the values ("" is IsolationAuto).
func (s Settings) Check() error {
	switch s.Isolation {
	case "", IsolationAuto, IsolationWorktree, IsolationNone:
		return nil
	}
	return fmt.Errorf("subagents.isolation must be %q, %q or %q, not %q", IsolationAuto, IsolationWorktree, IsolationNone, s.Isolation)
}

// Over returns s with the keys over sets replaced by over's.
func (s Settings) Over(over Settings) Settings {
	if over.MaxConcurrent > 0 {
		s.MaxConcurrent = over.MaxConcurrent
	}
	if over.MaxTurns > 0 {
		s.MaxTurns = over.MaxTurns
	}
	if over.Isolation != "" {
		s.Isolation = over.Isolation
	}
	return s
}

// OverCap returns the refusal of task call id past the first MaxCalls task calls of model
// message m; nil for one of those.
func OverCap(m *llm.Message, id string) *toolexec.Block {
	n, total := 0, 0
	for _, c := range m.Content {
		if c.Type != llm.ContentToolCall || c.Name != Name {
			continue
		}
		total++
		if n == 0 && c.ID == id {
			n = total
		}
	}
	if n <= MaxCalls {
		return nil
	}
	return &toolexec.Block{Reason: fmt.Sprintf("This task call was not run: at most %d task calls of one message run, and your message has %d (this is number %d). "+
		"The first %d run; once their results are in, call the tasks still needed in your next message (or give one task several related questions).", MaxCalls, total, n, MaxCalls)}
}

// Progress follows a child's run: its turns, tool calls and usage (Details), its last
// answer (Last), and whether it reached its turn limit (Limited). It is not safe for
// concurrent use: the caller serializes Observe and its reads.
type Progress struct {
	// MaxTurns is the child's turn limit.
	MaxTurns int
	Details  Details
	Last     string
	Limited  bool
}

// Observe counts event ev of the child's run and returns the step the task call shows for
// it ("" for none), and stop when the child is to be stopped: a turn that reached the limit
// asked for tools.
func (p *Progress) Observe(ev event.Event) (step string, stop bool) {
	switch e := ev.(type) {
	case event.TurnEnd:
		p.Details.Turns++
		if p.Details.Turns >= p.MaxTurns && len(e.ToolResults) > 0 {
			p.Limited = true
			return "", true
		}
	case event.ToolStart:
		step = e.ToolName + " " + title.Args(e.Args)
	case event.ToolEnd:
		p.Details.ToolCalls++
		step = e.ToolName + " -> " + title.Result(e.Result.Content, e.IsError)
	case event.MessageEnd:
		if m := e.Message; m != nil && m.Role == llm.RoleAssistant {
			addUsage(&p.Details.Usage, m.Usage)
			if t := strings.TrimSpace(m.Text()); t != "" {
				p.Last = t
				step = "says: " + title.First(t)
			}
		}
	}
	return step, false
}

// addUsage adds u (nil for none) to sum.
func addUsage(sum *llm.Usage, u *llm.Usage) {
	if u == nil {
		return
	}
	sum.Input += u.Input
	sum.Output += u.Output
	sum.CacheRead += u.CacheRead
	sum.CacheWrite += u.CacheWrite
	sum.Total += u.Total
}

// Summary says what child childID did, for a failed task's result: its turns and calls
// (det), its last answer, and what its worktree's merge said (merged; "" for none).
func Summary(childID string, det Details, last, merged string) string {
	done := fmt.Sprintf("The subagent (session %s) took %d turns and %d tool calls", childID, det.Turns, det.ToolCalls)
	if last != "" {
		done += "; its last answer:\n\n" + last
	} else {
		done += " and gave no answer."
	}
	if merged != "" {
		done += "\n\n" + merged
	}
	return done
}
