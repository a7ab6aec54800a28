// This file holds Runner: a session's hooks at the pipeline's moments, and what each
// decides. PreToolUse screens each validated call (toolexec's Screen stage), PostToolUse has
// its say on a result (the afterToolCall chain), UserPromptSubmit sees a prompt before its
// user message is added, Stop when the model would end the run, SessionStart when a session
// is made or loaded, PreCompact before a compaction. docs/hooks.md says what each decides.

package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// Runner runs the hooks of one session. Its fields are set once; its methods may run
// concurrently (a batch's calls are screened concurrently).
type Runner struct {
	// Hooks returns the hooks that apply now (the settings may have changed).
	Hooks func() *Set
	// Input returns the input every hook of event gets (the session's id, folder, file).
	Input func(event string) Input
	// Run runs one hook for the call callID ("" for none), telling the person of a hook
	// that failed. Contract: as Run; it returns once the hook's process has exited.
	Run func(ctx context.Context, h Hook, in Input, callID string) Result
	// Audit records a hook's decision about the call callID of tool ("" for none).
	Audit func(h Hook, callID, tool, decision, reason string)
}

// PromptBlocked is the error of a prompt a UserPromptSubmit hook refused.
type PromptBlocked struct {
	Command, Reason string
}

func (e *PromptBlocked) Error() string {
	return fmt.Sprintf("a UserPromptSubmit hook blocked this prompt (%q): %s", e.Command, e.Reason)
}

// PreToolUse is the Screen stage: the PreToolUse hooks matching the call, in order, with
// args the call's validated arguments. A deny (or exit 2) blocks the call at once;
// updatedInput replaces the arguments the next hooks and the tool see; of the other
// decisions "ask" wins over "allow". nil when no hook decided anything.
func (r Runner) PreToolUse(ctx context.Context, call llm.ToolCall, args json.RawMessage) (*toolexec.Screening, error) {
	list := r.Hooks().For(PreToolUse, call.Name)
	if len(list) == 0 {
		return nil, nil
	}
	var out toolexec.Screening
	for _, h := range list {
		in := r.Input(PreToolUse)
		in.ToolName, in.ToolInput, in.ToolUseID = call.Name, args, call.ID
		res := r.Run(ctx, h, in, call.ID)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if res.Blocked() {
			r.Audit(h, call.ID, call.Name, "deny", res.Reason())
			return &toolexec.Screening{Block: &toolexec.Block{Reason: fmt.Sprintf("The PreToolUse hook %q blocked this call: %s", h.Command, res.Reason())}}, nil
		}
		o, ok := res.Output()
		if !ok {
			continue
		}
		decision, reason := o.Specific.PermissionDecision, o.Specific.PermissionDecisionReason
		switch o.Decision { // the older shape: {"decision": "approve" | "block", "reason"}
		case "block":
			decision, reason = "deny", o.Reason
		case "approve":
			if decision == "" {
				decision = "allow"
			}
		}
		if len(o.Specific.UpdatedInput) > 0 && string(o.Specific.UpdatedInput) != "null" {
			args = o.Specific.UpdatedInput
			out.Args = args
			out.Source = fmt.Sprintf("The PreToolUse hook %q", h.Command)
			r.Audit(h, call.ID, call.Name, "updatedInput", "")
		}
		switch decision {
		case "deny":
			if reason == "" {
				reason = "no reason given"
			}
			r.Audit(h, call.ID, call.Name, "deny", reason)
			return &toolexec.Screening{Block: &toolexec.Block{Reason: fmt.Sprintf("The PreToolUse hook %q denied this call: %s", h.Command, reason)}}, nil
		case "ask":
			out.Verdict = "ask"
			r.Audit(h, call.ID, call.Name, "ask", reason)
		case "allow":
			if out.Verdict == "" {
				out.Verdict = "allow"
			}
			r.Audit(h, call.ID, call.Name, "allow", reason)
		}
	}
	if out.Args == nil && out.Verdict == "" {
		return nil, nil
	}
	return &out, nil
}

// PostToolUse is an afterToolCall step: the PostToolUse hooks matching the call, in order. A
// block turns the result into an error result with the reason appended; additionalContext
// is appended to the result the model reads. nil when no hook changed anything.
func (r Runner) PostToolUse(ctx context.Context, in toolexec.AfterInput) (*toolexec.Override, error) {
	list := r.Hooks().For(PostToolUse, in.Call.Name)
	if len(list) == 0 {
		return nil, nil
	}
	content, isError, changed := in.Result.Content, in.IsError, false
	for _, h := range list {
		hin := r.Input(PostToolUse)
		hin.ToolName, hin.ToolInput, hin.ToolUseID = in.Call.Name, in.Call.Arguments, in.Call.ID
		hin.ToolResponse = &ToolResponse{Content: content, Details: in.Result.Details, IsError: isError}
		res := r.Run(ctx, h, hin, in.Call.ID)
		if ctx.Err() != nil {
			break
		}
		var block, extra string
		if res.Blocked() {
			block = res.Reason()
		} else if o, ok := res.Output(); ok {
			if o.Decision == "block" {
				block = o.Reason
				if block == "" {
					block = "no reason given"
				}
			}
			extra = o.Specific.AdditionalContext
		}
		if block != "" {
			r.Audit(h, in.Call.ID, in.Call.Name, "block", block)
			content = append(append([]llm.Content(nil), content...), llm.Text(fmt.Sprintf("The PostToolUse hook %q blocked this result: %s", h.Command, block)))
			isError, changed = true, true
		}
		if extra != "" {
			r.Audit(h, in.Call.ID, in.Call.Name, "additionalContext", "")
			content = append(append([]llm.Content(nil), content...), llm.Text(extra))
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	return &toolexec.Override{Content: content, IsError: &isError}, nil
}

// UserPromptSubmit runs the UserPromptSubmit hooks for a prompt whose text is text: a block
// (or exit 2) refuses it, a *PromptBlocked; their context (additionalContext, or plain
// stdout) is added, after extra (the SessionStart hooks' context), to the prompt's last user
// message. It returns the prompts to run; prompts is not modified.
func (r Runner) UserPromptSubmit(ctx context.Context, prompts []llm.Message, text string, extra []string) ([]llm.Message, error) {
	for _, h := range r.Hooks().For(UserPromptSubmit, "") {
		in := r.Input(UserPromptSubmit)
		in.Prompt = text
		res := r.Run(ctx, h, in, "")
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if res.Blocked() {
			r.Audit(h, "", "", "block", res.Reason())
			return nil, &PromptBlocked{Command: h.Command, Reason: res.Reason()}
		}
		if o, ok := res.Output(); ok && o.Decision == "block" {
			r.Audit(h, "", "", "block", o.Reason)
			return nil, &PromptBlocked{Command: h.Command, Reason: o.Reason}
		}
		if c := res.Context(); c != "" {
			extra = append(extra, c)
		}
	}
	if len(extra) == 0 || len(prompts) == 0 {
		return prompts, nil
	}
	out := append([]llm.Message(nil), prompts...)
	last := &out[len(out)-1]
	last.Content = append(append([]llm.Content(nil), last.Content...), llm.Text(strings.Join(extra, "\n\n")))
	return out, nil
}

// Stop runs the Stop hooks when the model would end the run (active: a Stop hook already
// kept this prompt's run going), and returns why one keeps it going, "" when none does.
func (r Runner) Stop(ctx context.Context, active bool) string {
	for _, h := range r.Hooks().For(Stop, "") {
		in := r.Input(Stop)
		in.StopHookActive = active
		res := r.Run(ctx, h, in, "")
		if ctx.Err() != nil {
			return ""
		}
		reason := ""
		if res.Blocked() {
			reason = res.Reason()
		} else if o, ok := res.Output(); ok && o.Decision == "block" {
			reason = o.Reason
			if reason == "" {
				reason = "Keep going: the Stop hook asked for more."
			}
		}
		if reason != "" {
			r.Audit(h, "", "", "block", reason)
			return reason
		}
	}
	return ""
}

// MaxStopBlocks is how many times in a row Stop hooks may keep one prompt's run going.
const MaxStopBlocks = 5

// KeepGoing is Stop for a prompt whose run the Stop hooks kept going *blocks times in a row
// (its owner zeroes the count for each prompt): once that is MaxStopBlocks no hook runs and
// the run may end; a hook's reason to go on counts one more.
func (r Runner) KeepGoing(ctx context.Context, blocks *int) string {
	if *blocks >= MaxStopBlocks {
		return ""
	}
	reason := r.Stop(ctx, *blocks > 0)
	if reason != "" {
		*blocks++
	}
	return reason
}

// SessionStart runs the SessionStart hooks (source: "startup", "load" or "resume") and
// returns what they said for the model; nil once ctx ends.
func (r Runner) SessionStart(ctx context.Context, source string) []string {
	var out []string
	for _, h := range r.Hooks().For(SessionStart, "") {
		in := r.Input(SessionStart)
		in.Source = source
		res := r.Run(ctx, h, in, "")
		if ctx.Err() != nil {
			return nil
		}
		if c := res.Context(); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// PreCompact runs the PreCompact hooks before a compaction (manual: one the person asked
// for, their trigger "manual"; else "auto"); it returns why one blocks an automatic
// compaction (exit 2), "" when none does. A manual compaction always goes on: a hook that
// blocks it is audited, and its reason not returned.
func (r Runner) PreCompact(ctx context.Context, manual bool) string {
	trigger := "auto"
	if manual {
		trigger = "manual"
	}
	for _, h := range r.Hooks().For(PreCompact, "") {
		in := r.Input(PreCompact)
		in.Trigger = trigger
		res := r.Run(ctx, h, in, "")
		if res.Blocked() {
			r.Audit(h, "", "", "block", res.Reason())
			if manual {
				return ""
			}
			return fmt.Sprintf("the PreCompact hook %q blocked it: %s", h.Command, res.Reason())
		}
	}
	return ""
}
