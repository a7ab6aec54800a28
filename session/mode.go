// This file holds the session's mode (default, acceptEdits, plan, auto, bypassPermissions):
// which modes a session is offered, how the mode changes (SetMode, exit_plan_mode), and which
// calls a mode lets run without asking (see docs/permissions.md for the decision order). The
// model learns of a change from a note in its next message (modenote.go): the system prompt
// and the tools, exit_plan_mode among them, are the same in every mode.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/protected"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// The modes' ids, as ACP clients know them (the notes that tell the model are package
// prompt's).
const (
	ModeDefault     = prompt.ModeDefault
	ModeAcceptEdits = prompt.ModeAcceptEdits
	ModePlan        = prompt.ModePlan
	ModeAuto        = prompt.ModeAuto
	ModeBypass      = prompt.ModeBypass
)

// ExitPlanModeName is the built-in tool the model calls to put its plan to the person and
// leave plan mode. It is offered in every mode (so the tools stay the same bytes), and
// outside plan mode its call is refused.
const ExitPlanModeName = "exit_plan_mode"

// ModeInfo describes a mode, as session/new's modes.availableModes lists it.
type ModeInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Modes is a session's mode and the modes it may switch to (session/new's modes).
type Modes struct {
	CurrentModeID  string     `json:"currentModeId"`
	AvailableModes []ModeInfo `json:"availableModes"`
}

// allModes are every mode, in the order they are offered.
var allModes = []ModeInfo{
	{ModeDefault, "Default", "Changing files and running commands ask first, unless a rule or an \"always\" answer allows them."},
	{ModeAcceptEdits, "Accept edits", "Writes and edits inside the workspace run without asking; commands ask."},
	{ModePlan, "Plan", "Nothing changes files: the agent reads, runs commands in a read-only sandbox and proposes a plan."},
	{ModeAuto, "Auto", "Edits inside the workspace and sandboxed commands run without asking; leaving the sandbox asks."},
	{ModeBypass, "Bypass permissions", "Nothing asks; only deny rules stop a call."},
}

// modeState is the session's mode. Read by the batches' goroutines (decide) and the face's;
// changed by the face's (SetMode) and by exit_plan_mode's approval.
type modeState struct {
	// mu guards cur.
	mu  sync.Mutex
	cur string
}

// availableModes returns the modes this host offers: bypassPermissions only when the user
// settings allow it.
func (h *Host) availableModes() []ModeInfo {
	out := make([]ModeInfo, 0, len(allModes))
	for _, m := range allModes {
		if m.ID == ModeBypass && (h.loader == nil || !h.loader.AllowBypassPermissions()) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkMode returns an invalid error when id is no mode this host offers.
func (h *Host) checkMode(id string) error {
	var ids []string
	for _, m := range h.availableModes() {
		if m.ID == id {
			return nil
		}
		ids = append(ids, m.ID)
	}
	if id == ModeBypass {
		return invalid(`mode %q is not offered: the user settings do not say "allowBypassPermissions": true`, id)
	}
	return invalid("mode must be one of %s, not %q", strings.Join(ids, ", "), id)
}

// Mode returns the session's mode.
func (s *Session) Mode() string {
	s.mode.mu.Lock()
	defer s.mode.mu.Unlock()
	return s.mode.cur
}

// Modes returns the session's mode and the modes it may switch to.
func (s *Session) Modes() Modes {
	return Modes{CurrentModeID: s.Mode(), AvailableModes: s.host.availableModes()}
}

// SetMode switches the session to the mode id, which must be one the host offers (else an
// invalid error). When the mode changes, the session's file keeps it and the face's
// ModeChanged hears of it.
func (s *Session) SetMode(id string) error {
	if err := s.host.checkMode(id); err != nil {
		return err
	}
	s.setMode(id)
	return nil
}

// setMode switches the session to the mode id, checked by the caller.
func (s *Session) setMode(id string) {
	s.mode.mu.Lock()
	changed := s.mode.cur != id
	s.mode.cur = id
	s.mode.mu.Unlock()
	s.ws.ForceReadOnlySandbox(id == ModePlan)
	if !changed {
		return
	}
	s.saveMode(id)
	if s.modeChanged != nil {
		s.modeChanged(s, id)
	}
}

// changesFiles reports whether a call is a built-in write or edit.
func (s *Session) changesFiles(name string) bool {
	return s.builtin[name] && (name == tools.NameWrite || name == tools.NameEdit)
}

// explicitAsk reports whether a verdict to ask comes from a rule or a settings layer (an
// "ask" the user wrote), not from the tool's nature.
func explicitAsk(v permissions.Verdict) bool {
	return v.Decision == permissions.Ask && v.Source != "built-in" && !strings.HasPrefix(v.Source, "default")
}

// modeAllows returns who lets a call that would ask run without asking in mode, and whether
// the mode does: an "ask" rule asks in every mode but bypassPermissions; acceptEdits and
// auto let writes and edits inside the workspace (not its protected paths) run; auto and
// plan let sandboxed bash run (never an escalation).
func (s *Session) modeAllows(mode string, call llm.ToolCall, v permissions.Verdict, esc *Escalation) (string, bool) {
	by := "mode " + mode
	switch {
	case mode == ModeBypass:
		return by, true
	case explicitAsk(v):
		return "", false
	case (mode == ModeAcceptEdits || mode == ModeAuto) && s.changesFiles(call.Name):
		return by, s.insideWorkspace(call)
	case (mode == ModeAuto || mode == ModePlan) && call.Name == tools.NameBash && s.builtin[call.Name] && esc == nil:
		return by + " (sandboxed)", s.ws.BashSandboxed(false)
	}
	return "", false
}

// insideWorkspace reports whether a write or edit call's path leads inside one of the
// workspace folders and outside the paths other programs load commands from (package
// protected: .git, .pid, .vscode...), which still ask. Where it leads is where the kernel
// would write: every symbolic link on the way followed, a dangling last one included
// (docs/x.md -> ../.envrc creates .envrc). The path as written counts too: a link named
// .vscode makes what it leads to the editor's configuration.
func (s *Session) insideWorkspace(call llm.ToolCall) bool {
	p := pathArg(call)
	if p == "" {
		return false
	}
	_, rel, ok := s.ws.Leads(p)
	if !ok || rel == "." {
		return false
	}
	if _, hit := protected.Match(rel); hit {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.ws.Cwd(), p)
	}
	p = filepath.Clean(p)
	for _, root := range s.ws.Roots() {
		if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			if _, hit := protected.Match(r); hit {
				return false
			}
		}
	}
	return true
}

// pathArg returns a call's "path" argument ("" when it has none).
func pathArg(call llm.ToolCall) string {
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Arguments, &a) != nil {
		return ""
	}
	return a.Path
}

// planBlock is the refusal of a call that would change files in plan mode.
func planBlock(name string) *toolexec.Block {
	return &toolexec.Block{Reason: fmt.Sprintf("You are in plan mode: %s cannot change files now. Read and explore, then call %s with your plan; once the user approves it, you can make the changes.", name, ExitPlanModeName)}
}

// mcpMayChange reports whether name is an MCP tool whose server does not say it only reads
// (its annotations' readOnlyHint): plan mode does not run it, whatever the rules say (an MCP
// server runs outside the sandbox). The hint is the server's claim: outside plan mode it
// never skips a question.
func (s *Session) mcpMayChange(name string) bool {
	if s.builtin[name] || !strings.HasPrefix(name, "mcp__") {
		return false
	}
	if _, scripted := s.asks[name]; scripted {
		return false
	}
	ro, _ := s.annotations(name)["readOnlyHint"].(bool)
	return !ro
}

// planBlockMCP is the refusal of an MCP tool that may change things, in plan mode.
func planBlockMCP(name string) *toolexec.Block {
	return &toolexec.Block{Reason: fmt.Sprintf("You are in plan mode: %s is an MCP tool its server does not mark read-only (readOnlyHint), so it cannot run now. Use read-only tools to explore, then call %s with your plan; once the user approves it, you can use it.", name, ExitPlanModeName)}
}

// decideExitPlan is beforeToolCall's decision on exit_plan_mode: the person reads the plan
// and allows (the session switches to default, or to the mode the answer names) or denies
// (the model keeps planning, with the reason).
func (s *Session) decideExitPlan(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, decision) {
	if mode := s.Mode(); mode != ModePlan {
		return &toolexec.Block{Reason: fmt.Sprintf("%s works only in plan mode, and the mode is %s: there is no plan to approve. Go on with the task; no call is needed to leave plan mode.", ExitPlanModeName, mode)}, decision{"deny", "mode " + mode}
	}
	a, err := s.face.Ask(ctx, s, Approval{Call: in.Call, Plan: &PlanApproval{Text: planText(in.Call.Arguments)}})
	if err != nil {
		if ctx.Err() != nil {
			return &toolexec.Block{Reason: "Operation aborted"}, decision{"aborted", "cancelled while waiting for the user"}
		}
		return &toolexec.Block{Reason: fmt.Sprintf("The plan was not put to the user: the editor did not answer (%v). Keep planning.", err)}, decision{"deny", "no answer from the editor"}
	}
	switch a.Decision {
	case "allow", "allowAlways":
		next := ModeDefault
		if a.Mode == ModeAcceptEdits || a.Mode == ModeAuto {
			next = a.Mode
		}
		s.setMode(next)
		return nil, decision{"allow", "user"}
	}
	reason := "The user did not approve the plan. Keep planning."
	if a.Reason != "" {
		reason = "The user did not approve the plan: " + a.Reason + " Keep planning."
	}
	return &toolexec.Block{Reason: reason}, decision{"deny", "user"}
}

// planText is the plan of an exit_plan_mode call's arguments ("" when they have none).
func planText(args json.RawMessage) string {
	var a struct {
		Plan string `json:"plan"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Plan
}

// exitPlanToolSpec is exit_plan_mode's name, description and parameters (BuiltinTools
// lists them).
func exitPlanToolSpec() toolexec.Tool {
	return toolexec.Tool{
		Name: ExitPlanModeName,
		Description: "In plan mode only: when your plan is ready, call this with the plan (markdown) to put it to the user. " +
			"If they approve it, plan mode ends and you can make the changes; if not, keep planning with their reason.",
		Parameters:    json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","minLength":1,"description":"The plan, in markdown."}},"required":["plan"],"additionalProperties":false}`),
		ExecutionMode: toolexec.Sequential,
		View: func(json.RawMessage, any) toolexec.View {
			return toolexec.View{Kind: toolexec.KindSwitchMode, Title: "Leave plan mode"}
		},
	}
}

// exitPlanTool is exit_plan_mode: by the time it runs, the person allowed the plan and the
// session has left plan mode (decideExitPlan); it tells the model the mode it is in now.
func (s *Session) exitPlanTool() toolexec.Tool {
	t := exitPlanToolSpec()
	t.Execute = func(context.Context, toolexec.Call, func(event.Result)) (toolexec.Result, error) {
		return toolexec.TextResult(fmt.Sprintf("The user approved the plan. You are now in %s mode: carry it out.", s.Mode())), nil
	}
	return t
}

// modeCatalog is the session's catalog (toolexec.Catalog): exit_plan_mode, offered in every
// mode but to an explore subagent, first (it never changes), then its MCP servers' tools.
type modeCatalog struct {
	s     *Session
	inner toolexec.Catalog // nil: no MCP servers
	// exitPlan is exit_plan_mode; nil for an explore subagent, which has none.
	exitPlan *toolexec.Tool
}

// Lookup implements toolexec.Catalog.
func (c modeCatalog) Lookup(name string) (toolexec.Tool, bool) {
	if name == ExitPlanModeName && c.exitPlan != nil {
		return *c.exitPlan, true
	}
	if c.inner == nil {
		return toolexec.Tool{}, false
	}
	return c.inner.Lookup(name)
}

// Always implements toolexec.Catalog.
func (c modeCatalog) Always() []toolexec.Tool {
	var out []toolexec.Tool
	if c.exitPlan != nil {
		out = append(out, *c.exitPlan)
	}
	if c.inner != nil {
		out = append(out, c.inner.Always()...)
	}
	return out
}

// Version implements toolexec.Catalog: exit_plan_mode never changes, so it is the MCP
// servers' version.
func (c modeCatalog) Version() uint64 {
	if c.inner == nil {
		return 0
	}
	return c.inner.Version()
}

// startMode returns the mode a session starts in: a loaded one's saved mode (bypassPermissions
// loads as default, and so does a mode no longer offered), else the settings' mode, checked.
func (h *Host) startMode(cfg Config, saved string, loaded bool) (string, error) {
	if loaded {
		if saved == "" || saved == ModeBypass || h.checkMode(saved) != nil {
			return ModeDefault, nil
		}
		return saved, nil
	}
	if cfg.Mode == "" {
		return ModeDefault, nil
	}
	if err := h.checkMode(cfg.Mode); err != nil {
		return "", err
	}
	return cfg.Mode, nil
}

// saveMode keeps a mode change: in the header while the session's file does not exist yet,
// else as a mode entry; either way the next message saved tells the model (modenote.go).
func (s *Session) saveMode(id string) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	s.saved.mode = id
	if s.saved.file == nil && len(s.saved.entryIDs) == 0 && len(s.saved.compactions) == 0 {
		s.saved.header.Mode = id
		return
	}
	if s.saved.file == nil || s.saved.err != nil {
		return
	}
	s.saved.lastWrite.Store(time.Now().UnixNano())
	if _, err := s.saved.file.Append(store.Entry{Kind: store.KindMode, Timestamp: time.Now().UTC(), Mode: id}); err != nil {
		s.saveFailedLocked(err)
	}
}
