// This file holds subagents: the built-in tool task runs a child session, with a fresh
// context, as one tool call of its parent's pipeline. Several task calls of a batch run in
// parallel (at most subagents.maxConcurrent at once, the rest waiting in source order, by
// the tool's Slots); a child has no task tool (depth 1); an explore child has only the
// read-only tools and bash in a read-only sandbox, a general child the parent's tools and
// mode. A child records its changes in its parent's checkpoint, and two children of one
// parent never change the same file at the same time (task.Claims). The tool's parts apart
// from the sessions (spec, arguments, details, the following of a child's run) are package
// task's.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/worktree"
)

// TaskName is the subagent tool's name.
const TaskName = task.Name

// taskOverCap returns the refusal of a task call past the first maxTaskCalls of its
// message; nil for any other call (and for a batch the editor sent, which has no message).
func (s *Session) taskOverCap(in toolexec.BeforeInput) *toolexec.Block {
	if in.Call.Name != TaskName || !s.builtin[TaskName] || in.Assistant == nil {
		return nil
	}
	return task.OverCap(in.Assistant, in.Call.ID)
}

// SubagentSettings are the "subagents" settings: how many children run at once, and how
// many turns one may take (task.Settings; isolation: see worktrees.go).
type SubagentSettings = task.Settings

// subagentSettings returns the "subagents" settings of a session in cwd: the user settings',
// a trusted workspace folder's keys over them (an untrusted one's are ignored), and the
// editor's (initializationOptions, then session/new: editor) over both. They are read when
// the session is made.
func (h *Host) subagentSettings(cwd string, editor SubagentSettings) SubagentSettings {
	var out SubagentSettings
	if h.loader != nil {
		user, ws := h.loader.Subagents(cwd)
		for _, raw := range []json.RawMessage{user, ws} {
			var s SubagentSettings
			if len(raw) > 0 && json.Unmarshal(raw, &s) == nil {
				out = out.Over(s)
			}
		}
	}
	return out.Over(editor)
}

// childSpec is what makes a session a subagent: its parent, the task call, the agent.
type childSpec struct {
	parent      *Session
	toolCallID  string
	description string
	agent       string
	// def is the agent file of a defined agent (nil for explore and general); tools are
	// the only tools its child has (def.ToolSet of the parent's).
	def   *agents.Agent
	tools []string
	// model is a defined agent's own model (nil: the parent's).
	model *ModelConfig
	// worktree, when set, is the git worktree the child works in (worktrees.go).
	worktree *worktree.Tree
	// id is the child session's id (made before its worktree, which is named after it).
	id string
}

// subagentState is a session's part in subagents. The fields above owners are set by build
// and then only read; owners synchronizes itself.
type subagentState struct {
	// cfg is the session's configuration, which a child's starts from.
	cfg Config
	// files is the editor's view of files, which a child uses too.
	files *EditorFiles
	// child is set for a subagent's session made by its parent here; parentID for one
	// loaded from its file too.
	child    *childSpec
	parentID string
	// slots caps the task calls executing at once.
	slots *toolexec.Slots

	// owners maps each file a running child changed to that child (a parent's).
	owners task.Claims[*Session]

	// mu guards observer and parallel.
	mu sync.Mutex
	// parallel holds the task calls (by call ID) of a batch with two or more writing
	// children, noted by the Before hook for runTask (worktrees.go).
	parallel map[string]bool
	// observer, on a child, hears each event of its run (the task call's progress).
	observer func(event.Event)
}

// ParentID returns the id of the session whose task call made this one ("" for a session
// of the editor's).
func (s *Session) ParentID() string { return s.sub.parentID }

// observe passes a child's event to its task call. Called by the session's sink.
func (s *Session) observe(ev event.Event) {
	s.sub.mu.Lock()
	o := s.sub.observer
	s.sub.mu.Unlock()
	if o != nil {
		o(ev)
	}
}

// taskTool returns the task tool of a session that may have subagents (not a child).
func (s *Session) taskTool() (toolexec.Tool, bool) {
	if s.sub.child != nil || s.sub.parentID != "" {
		return toolexec.Tool{}, false
	}
	n := s.sub.cfg.Subagents.MaxConcurrent
	if n <= 0 {
		n = task.DefaultMaxConcurrent
	}
	s.sub.slots = toolexec.NewSlots(n)
	t := task.Spec()
	if defs := s.usedAgents(); len(defs) > 0 {
		t = task.WithAgents(t, defs)
	}
	t.Slots, t.Execute = s.sub.slots, s.runTask
	return t, true
}

// TaskDetails are the details of a task result.
type TaskDetails = task.Details

// runTask is task's Execute: it makes the child session, runs its prompt, and returns its
// final answer; progress goes to onUpdate as the child's steps.
func (s *Session) runTask(ctx context.Context, call toolexec.Call, onUpdate func(event.Result)) (toolexec.Result, error) {
	var a task.Args
	if err := call.Decode(&a); err != nil {
		return toolexec.Result{}, err
	}
	if a.Agent == "" {
		a.Agent = "explore"
	}
	spec, notes, err := s.childSpecFor(ctx, call.ID, a)
	if err != nil {
		return toolexec.Result{}, err
	}
	child, err := s.newChild(spec)
	if err != nil {
		if spec.worktree != nil {
			_ = spec.worktree.Discard(context.WithoutCancel(ctx))
		}
		return toolexec.Result{}, fmt.Errorf("the subagent could not be started: %v", err)
	}
	for _, n := range notes {
		s.host.log.Info("subagent", "agent", a.Agent, "note", n)
		onUpdate(event.Result{Content: []llm.Content{llm.Text(n)}, Details: map[string]any{"childSessionId": child.id, "step": n}})
	}
	defer func() {
		s.sub.owners.Release(child)
		_ = s.host.CloseSession(child.id)
	}()
	maxTurns := s.sub.cfg.Subagents.MaxTurns
	if maxTurns <= 0 {
		maxTurns = task.DefaultMaxTurns
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := &task.Progress{MaxTurns: maxTurns, Details: TaskDetails{ChildSessionID: child.id}}
	var mu sync.Mutex // guards prog while the child's run reports
	child.sub.mu.Lock()
	child.sub.observer = func(ev event.Event) {
		mu.Lock()
		step, stop := prog.Observe(ev)
		if stop {
			cancel()
		}
		mu.Unlock()
		if step != "" {
			onUpdate(event.Result{Content: []llm.Content{llm.Text(step)}, Details: map[string]any{"childSessionId": child.id, "step": step}})
		}
	}
	child.sub.mu.Unlock()
	start := event.SubagentStart{ParentSessionID: s.id, ToolCallID: call.ID, ChildSessionID: child.id, Description: a.Description, Agent: a.Agent}
	if spec.worktree != nil {
		start.Worktree = spec.worktree.Path
	}
	s.face.Emit(child, start)
	stop := "error"
	res, err := runChild(cctx, child, a.Prompt)
	mu.Lock()
	defer mu.Unlock()
	det, last, limited := &prog.Details, prog.Last, prog.Limited
	det.StopReason = res.stop
	switch {
	case limited:
		det.StopReason = "maxTurns"
	case ctx.Err() != nil:
		det.StopReason = "aborted"
	case err != nil:
		det.StopReason = "error"
	}
	stop = det.StopReason
	s.face.Emit(child, event.SubagentEnd{ParentSessionID: s.id, ToolCallID: call.ID, ChildSessionID: child.id, StopReason: stop})
	merged := ""
	if spec.worktree != nil {
		det.Worktree, merged = s.mergeWorktree(ctx, spec.worktree)
	}
	done := task.Summary(child.id, *det, last, merged)
	switch {
	case limited:
		return toolexec.Result{}, task.Failure(fmt.Sprintf("The subagent stopped after %d turns, its limit (subagents.maxTurns). ", maxTurns) + done)
	case ctx.Err() != nil:
		return toolexec.Result{}, ctx.Err()
	case err != nil:
		return toolexec.Result{}, fmt.Errorf("the subagent failed: %v. %s", err, done)
	case stop != string(llm.StopEnd):
		why := res.msg
		if why == "" {
			why = "it stopped with " + stop
		}
		return toolexec.Result{}, fmt.Errorf("the subagent failed: %s. %s", why, done)
	}
	if last == "" {
		last = "(The subagent gave no answer.)"
	}
	if merged != "" {
		last += "\n\n" + merged
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(last)}, Details: *det}, nil
}

// childSpecFor makes the spec of the child a task call (callID, arguments a) starts: a
// defined agent's tools and model, its own id, and a worktree when it is to be isolated. The
// notes say what was left out or could not be had; an error for an unknown agent.
func (s *Session) childSpecFor(ctx context.Context, callID string, a task.Args) (childSpec, []string, error) {
	spec := childSpec{parent: s, toolCallID: callID, description: a.Description, agent: a.Agent}
	var notes []string
	if a.Agent != "explore" && a.Agent != "general" {
		def, n, err := s.agentFor(a.Agent)
		if err != nil {
			return childSpec{}, nil, err
		}
		spec.def, notes = def, n
		spec.tools, n = def.ToolSet(s.activeToolNames())
		notes = append(notes, n...)
		var warn string
		if spec.model, warn = s.agentModel(def); warn != "" {
			notes = append(notes, warn)
		}
	}
	spec.id = store.NewID()
	if s.isolate(callID, spec) {
		var why string
		if spec.worktree, why = s.makeWorktree(ctx, spec.id); why != "" {
			notes = append(notes, why)
		}
	}
	return spec, notes, nil
}

// runChild runs the child's one prompt and returns how its run ended.
func runChild(ctx context.Context, child *Session, prompt string) (loopResult, error) {
	if err := child.Begin(); err != nil {
		return loopResult{}, err
	}
	r, err := child.Prompt(ctx, []llm.Message{llm.NewUser(prompt)})
	child.End()
	res := loopResult{stop: string(r.StopReason)}
	if n := len(r.Messages); n > 0 {
		res.msg = r.Messages[n-1].ErrorMessage
	}
	return res, err
}

// loopResult is what runTask keeps of the child's run.
type loopResult struct{ stop, msg string }

// newChild makes the child session of a task call.
func (s *Session) newChild(spec childSpec) (*Session, error) {
	cfg := s.sub.cfg
	if m := s.currentModel(); m != nil && m.Config != nil {
		cfg.Model = m.Config
		if sub, ok := m.Config.Subagents[spec.description]; ok {
			// A scripted parent's script for this task (tests, recorded runs).
			cfg.Model = sub
		}
	}
	cfg.Mode = s.Mode()
	if def := spec.def; def != nil {
		cfg.AppendSystemPrompt = prompt.Join(cfg.AppendSystemPrompt, def.Prompt)
		if spec.model != nil {
			cfg.Model = spec.model
		}
	}
	if cfg.Mode == ModeBypass && (s.host.loader == nil || !s.host.loader.AllowBypassPermissions()) {
		cfg.Mode = ModeDefault
	}
	if spec.agent == "explore" {
		// Read-only tools, and bash in a read-only sandbox without asking where there is a
		// sandbox (auto mode's sandboxed commands).
		cfg.Mode = ModeAuto
		cfg.ScriptedTools = nil
	}
	o := Options{ID: spec.id, Face: s.face, Files: s.sub.files, ModeChanged: s.modeChanged, child: &spec}
	if t := spec.worktree; t != nil {
		// The child works in its worktree: its confinement, stale guard and sandbox's
		// writable root are the worktree; the editor does not have its files open.
		ws, err := tools.NewWorkspace(t.Folder, []string{t.Folder})
		if err != nil {
			return nil, err
		}
		cfg.Cwd, o.Files, o.ws = t.Folder, nil, ws
	}
	child, err := s.host.build(cfg, o, nil)
	if err != nil {
		return nil, err
	}
	if spec.agent == "explore" {
		child.ws.ForceReadOnlySandbox(true)
	}
	return child, nil
}

// conflict returns, for a subagent about to change path, the error result naming the
// other running task that changed it; nil when the change may go on (or s is no child).
func (s *Session) conflict(path string) error {
	c := s.sub.child
	if c == nil || c.worktree != nil {
		return nil // a child in its own worktree changes only its own files
	}
	other, taken := c.parent.sub.owners.Claim(path, s)
	if !taken {
		return nil
	}
	oc := other.sub.child
	return task.Conflict(path, oc.description, oc.toolCallID, other.id)
}
