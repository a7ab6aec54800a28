// This file holds Session, one conversation: its state, how it is built, and its runs.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/changes"
	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/cost"
	"github.com/pid-agent/pid/escalate"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/hooks"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/quietsync"
	"github.com/pid-agent/pid/review"
	"github.com/pid-agent/pid/scripted"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// Session is one conversation: its agent (transcript, model, tools), workspace and
// permissions, and the file it is saved in. Its methods are safe for concurrent use.
//
// Its state is grouped by concern. The fields at the top are set by build before the session
// is published in its host, and never reassigned: any goroutine reads them without a lock
// (what they point at is never modified, or synchronizes itself). Each group below them
// (run, model, saved, compacting, sampling, mode) is a struct of its own whose mutex, when it has
// one, sits right above the fields it guards, and says which goroutines touch it.
//
// Lock order. Of the session's locks (run.mu, model.mu, saved.mu, sampling.mu, mode.mu and
// hooks.start's here; gates.mu, and its MCP catalog's, which package mcp orders), no two are
// ever held at a time, nor one with the host's mu. Holding one, the session calls out only
// so: saved.mu is held while the session's file (package store) is created, appended to and
// synced, and while the face's Warn is told that saving failed (so Warn must not call back
// into the session, and a face must not call the session holding a lock its Warn takes);
// sampling.mu for a whole model call.
type Session struct {
	// Identity: the session's id, the host it belongs to, and the face that serves it
	// (modeChanged its hook for mode changes, may be nil).
	id          string
	host        *Host
	face        Face
	modeChanged func(s *Session, mode string)

	// The agent (the loop: transcript, active tools, steer and follow-up queues, each
	// guarded inside package loop) and the catalog of the session's MCP servers (mcp.go,
	// with locks of its own).
	agent *loop.Agent
	mcp   *mcp.Catalog
	// mcpOwn is the session's own mcpServers, kept to work its servers out again.
	mcpOwn json.RawMessage
	// catalog is what the agent's toolbox looks up past its own tools: exit_plan_mode and
	// the MCP servers' tools.
	catalog toolexec.Catalog
	// asks holds the scripted tools, with whether each needs approval by default;
	// builtin the built-in tools the session has. Filled by build, then only read.
	asks    map[string]bool
	builtin map[string]bool

	// The workspace (its own locks) and the session's own permissions (spec, the last
	// layer of its policy; never modified).
	ws   *tools.Workspace
	spec *permissions.Spec

	// Parts that synchronize themselves, touched by the tool calls' goroutines (policy.go,
	// scripted.go): memory keeps the "always" answers the store could not keep, exactly as
	// scoped; decisions holds, per call id, what beforeToolCall decided about a call that
	// will run, until the audit hook reads it or the call ends; starts the calls' start
	// times for the audit log; gates the scripted tools' waits for a call's end.
	memory *permissions.Store
	// net is the session's network outside its commands: the Asker of unknown hosts and
	// fetch's proxy (network.go).
	net *sessionNet
	// escalations keeps the "always" answers to bash calls asking to leave the sandbox,
	// apart from every other answer (sandbox.go).
	escalations escalate.Memory
	decisions   audit.Decisions
	starts      *audit.Starts
	gates       *scripted.Gates

	run        runState
	model      modelState
	saved      savedState
	compacting compactingState
	sampling   samplingState
	mode       modeState
	checkpts   checkpointState
	// changes is the review of the prompts' changes (changes.go): set by build, a
	// subagent's is its parent's; it locks itself.
	changes *review.Tracker
	hooks   hookState
	sub     subagentState
	// instr is what was last read of the instruction files (instructions.go); subInstr the
	// subfolders' files given in tool results (subinstructions.go). Both lock themselves.
	instr    prompt.Instructions
	subInstr prompt.Given
	// resume is whether the first model call was made (resume.go).
	resume resumeState
	// plan holds todo_write's calls until their end (plan.go); usage the cost (usage.go).
	plan  planState
	usage cost.Meter
	// diag is where the problems after an edit come from (diagnostics.go).
	diag diagnosticsState
}

// runState is the run that holds the session: a prompt or a compaction claimed by Begin.
// Touched by the face's request goroutines (Begin, End, CancelRun, Compact, the host's
// CloseSession) and by the run's own goroutine (runContext).
type runState struct {
	// mu guards the fields below it.
	mu      sync.Mutex
	running bool // a prompt or a compaction is in progress
	closed  bool // the session was closed: Begin refuses
	// done closes when the run claimed by Begin ends; cancel cancels it (nil until the run
	// has its context).
	done   chan struct{}
	cancel context.CancelFunc
}

// modelState is the session's model (model.go). Read by any goroutine through currentModel
// (the loop's for each model call, the face's, the MCP servers' sampling requests);
// replaced by SetModel and SetThinking from the face's goroutines.
type modelState struct {
	// mu guards cur.
	mu sync.Mutex
	// cur is the model now, which SetModel replaces whole and nothing modifies.
	cur *sessionModel
}

// savedState is what the session's file holds and how it is written (persist.go). Touched
// by the loop's goroutine (the run's sink saves each message, compactions), by the face's
// goroutines (SetModel saving a model change, Items, Unsaved, a fork's snapshot, a load,
// closing), and by the file's syncer goroutine.
type savedState struct {
	// mu guards the fields below it. It is held while the file is written to, and while the
	// face's Warn is told that saving failed (saveFailedLocked).
	mu sync.Mutex
	// file is the session's file, created with its first message; nil before that, or
	// when sessions cannot be saved.
	file *store.File
	// header is what the session's file starts with: what re-creates it after a restart
	// (SetModel changes its model while the file does not exist yet).
	header store.Header
	// entryIDs holds the file entry of each transcript message ("" when not saved).
	entryIDs []string
	// compactions are the compactions of the transcript, in order.
	compactions []history.Compaction
	// modelChanges are the model changes made once the transcript had messages, in order.
	modelChanges []history.ModelChange
	// presaved maps the call id of each tool result saved at its ToolEnd, whose MessageEnd
	// is still to come (it then saves nothing), to its entry id ("" when not saved).
	presaved map[string]string
	// err is why saving stopped (reported once); later messages are not saved.
	err error
	// unsaved are the holes the session's file had when it was loaded.
	unsaved []Unsaved
	// The mode notes (modenote.go): mode is the mode as the file has it (its last mode
	// entry, or its header's), told the mode the model was last told (toldStart before any
	// note); notes maps the transcript index of each message carrying a note to its mode,
	// pending the call id of each result saved at its ToolEnd whose note waits for its
	// place in the transcript (its MessageEnd).
	mode, told, toldStart string
	notes                 map[int]string
	pending               map[string]string
	// syncer flushes the file soon after a turn (persist.go's syncSoon); nil until the
	// first request, and after closeFile.
	syncer *quietsync.Syncer

	// lastWrite is when the file was last appended to (Unix nanoseconds): written under mu,
	// read by the syncer without it.
	lastWrite atomic.Int64
}

// compactingState is what compaction.go keeps about the model's view of the transcript.
// Only the run holding the session touches it: the loop's goroutine during a prompt (the
// agent's TransformContext and Provider are called there, one after the other), or Compact's
// while it holds the session; Begin and End order one run after the previous. It needs no
// lock.
type compactingState struct {
	// counter measures the context.
	counter compact.Counter
	// tried is the transcript's length at the last automatic compaction that failed.
	tried int
	// lastTranscript is the transcript of the running model call (set by transformContext),
	// for a compaction after the provider answered that the context is too long.
	lastTranscript []llm.Message
	// view is what the model saw of the transcript at the last call.
	view struct {
		made        bool
		compactions int // the compactions it was made for
		covered     int // the transcript messages it holds
		msgs        []llm.Message
	}
	// summary is the message the model sees for the last compaction (plan.go's
	// summaryMessage), and its estimated tokens, with the compaction it was made for.
	summary struct {
		n, at, firstKept, tokens int
		text                     string
		msg                      llm.Message
	}
}

// samplingState serializes the MCP servers' sampling requests (sampling.go): touched by
// package mcp's handler goroutines, possibly several at a time (parallel tool calls).
type samplingState struct {
	// mu is held while one sampling request runs on the model, so that the others wait; it
	// guards no field.
	mu sync.Mutex
}

// restoring is what a session loaded or forked from a file starts with.
type restoring struct {
	file        *store.File
	header      store.Header
	transcript  []llm.Message
	entryIDs    []string
	compactions []history.Compaction
	// calls is the number of model calls recorded (assistant messages) since the last model
	// change: a scripted model goes on with that turn. summaries is the number of
	// compactions since then: its summaries go on from there.
	calls, summaries int
	// modelChanges are the model changes of the branch.
	modelChanges []history.ModelChange
	// mode is the session's last saved mode ("" for default).
	mode string
	// notes maps the transcript index of each message that carries a mode note to the
	// note's mode (modenote.go).
	notes map[int]string
	// marks maps each checkpoint of the file to its mark's entry id (checkpoints.go).
	marks map[string]string
	// reviews are the file's review entries, undone the changes undone since its last
	// prompt began (changes.go).
	reviews []store.Review
	undone  []changes.Undone
}

// New makes a session from its settings (already merged with the client's defaults). It is
// saved from its first message on.
func (h *Host) New(cfg Config, o Options) (*Session, error) {
	return h.build(cfg, o, nil)
}

// build makes a new session, or re-creates a saved one when r is set.
func (h *Host) build(cfg Config, o Options, r *restoring) (*Session, error) {
	spec, err := cfg.Check()
	if err != nil {
		return nil, invalid("%v", err)
	}
	ws := o.ws
	if ws == nil {
		if ws, err = h.workspace(cfg.Cwd, o.Folders); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			ws.Close()
		}
	}()
	model, err := h.buildModel(ws.Cwd(), &cfg, r)
	if err != nil {
		return nil, err
	}
	asker := &hostAsker{}
	resolved, err := h.useSandbox(ws, cfg, asker)
	if err != nil {
		return nil, err
	}
	network, err := h.newSessionNet(resolved, asker)
	if err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			network.close()
		}
	}()
	cfg.Subagents = h.subagentSettings(ws.Cwd(), cfg.Subagents)
	savedMode := ""
	if r != nil {
		savedMode = r.mode
	}
	mode, err := h.startMode(cfg, savedMode, r != nil)
	if err != nil {
		return nil, err
	}
	s := &Session{host: h, face: o.Face, modeChanged: o.ModeChanged, mode: modeState{cur: mode}, spec: spec, builtin: map[string]bool{}, ws: ws,
		starts: audit.NewStarts(), gates: scripted.NewGates(), memory: permissions.NewMemoryStore(), model: modelState{cur: model}, net: network}
	network.asker.s.Store(s)
	s.attach(cfg, o, r, mode)
	box, initial, err := s.buildTools(cfg, o)
	if err != nil {
		return nil, err
	}
	servers, untrusted, err := h.mcpServers(ws.Cwd(), cfg.MCPServers)
	if err != nil {
		return nil, err
	}
	if r != nil {
		initial = savedTools(r.header.Tools, box)
	}
	if s.id = o.ID; s.id == "" {
		s.id = store.NewID()
	}
	s.openCheckpoints(r, o.Files)
	s.openChanges(r)
	s.wireJobs()
	s.openMCP(servers, untrusted, cfg.MCPServers)
	defer func() {
		if !ok {
			s.closeMCP(true)
			s.closeCheckpoints()
		}
	}()
	box = box.WithCatalog(s.buildCatalog(o))
	ws.ForceReadOnlySandbox(mode == ModePlan)
	sysPrompt, started := s.buildPrompt(cfg, o, r, mode, mcp.HasDeferred(servers))
	// The loop always has a provider: it calls the session's model of the moment (which
	// SetModel may change between two calls); Prompt refuses to run without one.
	if s.hooks.own, err = hooks.Parse(cfg.Hooks, "session"); err != nil {
		return nil, invalid("%v", err)
	}
	acfg := loop.AgentConfig{
		Provider: &compactingProvider{s: s}, SystemPrompt: sysPrompt, Toolbox: box, InitialTools: initial,
		ToolExecution: toolexec.Mode(cfg.ToolExecution), Before: s.beforeToolCall, After: s.withSubInstructions(s.afterHook(o.After)),
		TransformContext: s.transformContext,
		Screen:           s.preToolUse, ScreenWhen: s.screens, BeforeStop: s.beforeStop,
	}
	if s.agent, err = loop.NewAgent(acfg); err != nil {
		return nil, invalid("%v", err)
	}
	if err := s.startFile(cfg, o, r, initial, mode, started); err != nil {
		return nil, err
	}
	if h.commands != nil {
		// Watched before the face tells its client the list: a change made then is seen.
		h.commands.Watch(s.root())
		h.commands.WatchDirs(s.skillDirs()...)
	}
	if err := h.register(s); err != nil {
		return nil, err
	}
	ok = true
	source := "startup"
	if r != nil {
		source = "load"
	}
	s.startSessionHooks(source)
	return s, nil
}

// attach gives a session being built by build the editor's files and terminals (o), its
// subagent part, its mode notes (a loaded one's from r) and its parent's id.
func (s *Session) attach(cfg Config, o Options, r *restoring, mode string) {
	ws := s.ws
	if o.Files != nil {
		ws.UseEditorFiles(*o.Files)
	}
	if o.Terminals != nil && o.child == nil {
		if exe, err := os.Executable(); err == nil {
			ws.UseTerminals(o.Terminals, exe, func(msg string) { s.face.Warn(s, msg) })
		}
	}
	s.sub.cfg, s.sub.files, s.sub.child = cfg, o.Files, o.child
	if r != nil {
		s.restoreNotes(r.notes, history.ToldStart(r.header), r.mode)
	} else if o.child != nil {
		s.restoreNotes(nil, mode, mode) // its prompt says its mode
	} else {
		s.restoreNotes(nil, ModeDefault, mode)
	}
	switch {
	case o.child != nil:
		s.sub.parentID = o.child.parent.id
	case r != nil:
		s.sub.parentID = r.header.ParentSessionID
	}
}

// buildModel makes a session's model: the session's own, else the settings'; a new session's
// named by provider and id gets the rest from the settings' "models" list. A saved session's
// (r) is as saved. It sets cfg.Model to the model's configuration.
func (h *Host) buildModel(cwd string, cfg *Config, r *restoring) (*sessionModel, error) {
	calls, summaries := 0, 0
	if r != nil {
		calls, summaries = r.calls, r.summaries
	}
	m, err := h.modelSettings().Start(cwd, cfg.Model, r != nil, calls, summaries)
	if err == nil {
		cfg.Model = m.Config
	}
	return m, err
}

// buildTools makes the session's toolbox and the names of the tools it starts with: the
// built-in ones first (a scripted tool of the same name replaces one), then task and the
// scripted tools; an explore child and a defined agent's child start with their own sets.
func (s *Session) buildTools(cfg Config, o Options) (*toolexec.Toolbox, []string, error) {
	sc, err := scripted.Build(cfg.ScriptedTools, s.gates)
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	s.asks = sc.Asks
	initial := sc.Initial
	// Built-in tools first; a scripted tool of the same name replaces the built-in one.
	var all []toolexec.Tool
	for _, t := range s.setUpDiagnostics(cfg, o.Files, append(tools.New(s.ws), todoWriteTool(s), skillTool(s), s.net.fetchTool())) {
		if t.Name == tools.NameBash && o.child != nil && o.child.agent == "explore" {
			t = task.ExploreBash(t)
		}
		if _, replaced := s.asks[t.Name]; !replaced {
			all = append(all, s.recorded(t))
			s.builtin[t.Name] = true
			initial = append(initial, t.Name)
		}
	}
	if t, ok := s.taskTool(); ok {
		all = append(all, t)
		s.builtin[t.Name] = true
		initial = append(initial, t.Name)
	}
	if o.child != nil && o.child.agent == "explore" {
		// An explore child sees only the read-only tools and bash.
		initial = slices.DeleteFunc(initial, func(n string) bool { return !slices.Contains(task.ExploreTools, n) })
	}
	if o.child != nil && o.child.def != nil {
		// A defined agent's child has exactly the tools its file gives it.
		initial = slices.DeleteFunc(initial, func(n string) bool { return !slices.Contains(o.child.tools, n) })
	}
	box, err := toolexec.NewToolbox(append(all, sc.Tools...)...)
	if err != nil {
		return nil, nil, invalid("scriptedTools: %v", err)
	}
	return box, initial, nil
}

// savedTools are the tools a loaded session started with, as saved; a tool that no longer
// exists is left out (the load reports it).
func savedTools(saved []string, box *toolexec.Toolbox) []string {
	initial := make([]string, 0, len(saved))
	for _, name := range saved {
		if _, known := box.Tool(name); known {
			initial = append(initial, name)
		}
	}
	return initial
}

// buildCatalog makes the session's catalog of tools beyond its toolbox (modes.Catalog: its
// MCP tools, and exit_plan_mode unless an explore child or an agent without it) and keeps it.
func (s *Session) buildCatalog(o Options) modes.Catalog {
	var inner toolexec.Catalog
	if s.mcp != nil {
		inner = s.mcp
	}
	cat := modes.Catalog{Inner: inner}
	if o.child == nil || o.child.agent != "explore" && (o.child.def == nil || slices.Contains(o.child.tools, ExitPlanModeName)) {
		t := s.exitPlanTool()
		cat.ExitPlan = &t
	}
	s.catalog = cat
	return cat
}

// buildPrompt makes the session's system prompt once, from the day it started (a loaded
// one's own), so that every model call sends the same bytes; it returns that day too.
func (s *Session) buildPrompt(cfg Config, o Options, r *restoring, mode string, deferred bool) (string, time.Time) {
	started := time.Now().UTC()
	if r != nil {
		started = r.header.CreatedAt
	}
	facts := prompt.FactsFor(s.host.markerNonce(), s.ws.Cwd(), s.ws.Roots(), started, deferred)
	if c := o.child; c != nil {
		if c.agent == "explore" {
			facts.CanChange = false
		} else {
			facts.Mode, facts.ModeSection = mode, prompt.ModeText(mode)
		}
	}
	return prompt.System(cfg.SystemPrompt, cfg.AppendSystemPrompt, facts, o.child != nil), started
}

// startFile sets up the session file's header (a loaded session's as its file says, with
// what the file holds) and gives a loaded session's transcript to its agent.
func (s *Session) startFile(cfg Config, o Options, r *restoring, initial []string, mode string, started time.Time) error {
	s.saved.header = cfg.Header(s.id, s.ws.Cwd(), initial)
	s.saved.header.Mode = mode
	if c := o.child; c != nil {
		s.saved.header.ParentSessionID, s.saved.header.ParentToolCallID = c.parent.id, c.toolCallID
	} else if r != nil {
		s.saved.header.ParentSessionID, s.saved.header.ParentToolCallID = r.header.ParentSessionID, r.header.ParentToolCallID
	}
	s.saved.header.CreatedAt = started
	if r != nil {
		s.saved.header.CreatedAt, s.saved.header.ForkedFrom = r.header.CreatedAt, r.header.ForkedFrom
		s.saved.file, s.saved.entryIDs, s.saved.compactions, s.saved.modelChanges = r.file, r.entryIDs, r.compactions, r.modelChanges
		if err := s.agent.Restore(r.transcript); err != nil {
			return err
		}
		s.subInstr.Reset(r.transcript[history.KeptFrom(r.compactions):])
	}
	return nil
}

// register adds s to the host's open sessions; an error when one of its id is open.
func (h *Host) register(s *Session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[s.id] != nil {
		return invalid("session %s is already open", s.id)
	}
	h.sessions[s.id] = s
	return nil
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Cwd returns the session's working folder.
func (s *Session) Cwd() string { return s.ws.Cwd() }

// Tools returns the tools active now (R12), with where each comes from.
func (s *Session) Tools() []ToolInfo {
	all := s.agent.Tools().Tools()
	out := make([]ToolInfo, len(all))
	for i, t := range all {
		out[i] = s.info(t, true)
	}
	return out
}

// ToolList returns every tool of the session (tools/list): the active ones, then those the
// model is not offered yet (scripted tools made inactive, deferred MCP tools that
// tool_search has not loaded).
func (s *Session) ToolList() []ToolInfo {
	out := s.Tools()
	active := map[string]bool{}
	for _, t := range out {
		active[t.Name] = true
	}
	box := s.agent.Tools().Toolbox()
	for _, name := range box.Names() {
		if t, ok := box.Tool(name); ok && !active[name] {
			out = append(out, s.info(t, false))
		}
	}
	if s.mcp != nil {
		for _, name := range s.mcp.ToolNames() {
			if active[name] {
				continue
			}
			if t, ok := s.mcp.Lookup(name); ok {
				out = append(out, s.info(t, false))
			}
		}
	}
	return out
}

// ToolView is how a tool call is shown to a person (see toolexec.View): its kind, a title,
// the files it touches and, once it ended without error, the files it changed.
type ToolView = toolexec.View

// ToolView returns how a call of the session's tool name with args is shown to a person,
// as the tool describes it; with details (the result's, of a call that ended without
// error; nil at its start), with the files it changed. A tool the session does not know
// (any more) is shown by its name.
//
// Contract: safe for concurrent use; pure but for looking the tool up.
func (s *Session) ToolView(name string, args json.RawMessage, details any) ToolView {
	t, ok := s.agent.Tools().Toolbox().Tool(name)
	if !ok {
		t, ok = s.catalog.Lookup(name)
	}
	if !ok {
		t = toolexec.Tool{Name: name}
	}
	return t.ViewOf(args, details)
}

// info describes a tool of the session.
func (s *Session) info(t toolexec.Tool, active bool) ToolInfo {
	ti := info(t)
	ti.Active, ti.Unavailable = active, t.Unavailable
	switch {
	case s.builtin[t.Name]:
		ti.Source = SourceBuiltin
	case t.Name == ToolSearchName, t.Name == ExitPlanModeName:
		ti.Source = SourceBuiltin
	case strings.HasPrefix(t.Name, "mcp__"):
		ti.Source = sourceMCP + s.mcp.ServerOf(t.Name)
	default:
		ti.Source = SourceSession
	}
	return ti
}

func info(t toolexec.Tool) ToolInfo {
	mode := t.ExecutionMode
	if mode == "" {
		mode = toolexec.Parallel
	}
	params := t.Parameters
	if len(params) == 0 {
		params = []byte(`{"type":"object"}`)
	}
	return ToolInfo{Name: t.Name, Description: t.Description, Parameters: params, ExecutionMode: string(mode), Source: SourceBuiltin, Active: true}
}

// Begin claims the session for a prompt, or returns ErrBusy when one runs. A face
// calls it where requests arrive in order (so that of two prompts sent back to back the
// second is the busy one), then Prompt, then End.
func (s *Session) Begin() error {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	if s.run.closed {
		return fmt.Errorf("%w: %q (it was closed)", ErrUnknownSession, s.id)
	}
	if s.run.running {
		return ErrBusy
	}
	s.run.running = true
	s.run.done, s.run.cancel = make(chan struct{}), nil
	return nil
}

// End releases the session claimed by Begin.
func (s *Session) End() {
	s.run.mu.Lock()
	s.run.running = false
	close(s.run.done)
	s.run.cancel = nil
	s.run.mu.Unlock()
}

// runContext returns ctx made cancellable by CancelRun, for the run claimed by Begin.
func (s *Session) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	s.run.mu.Lock()
	s.run.cancel = cancel
	s.run.mu.Unlock()
	return ctx, cancel
}

// CancelRun cancels the session's running prompt or compaction, if any, and waits until it
// has ended (its answer is sent by the face as usual).
func (s *Session) CancelRun() {
	s.run.mu.Lock()
	running, done, cancel := s.run.running, s.run.done, s.run.cancel
	s.run.mu.Unlock()
	if !running {
		return
	}
	if cancel != nil {
		cancel()
	}
	<-done
}

// Prompt runs the agent with prompts as the new input (see loop.Agent.PromptMessages).
// Without a model it returns a SetupError (noModel or untrustedSetting, matching
// ErrNoModel), and with a model whose API key is missing one too (apiKeyMissing): nothing
// runs then.
func (s *Session) Prompt(ctx context.Context, prompts []llm.Message) (PromptResult, error) {
	s.gates.Enter()
	defer s.gates.Leave()
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	if err := s.ModelProblem(); err != nil {
		return PromptResult{}, err
	}
	s.hooks.stops = 0
	prompts, err := s.userPromptSubmit(ctx, prompts)
	if err != nil {
		return PromptResult{}, err
	}
	cp, end := s.checkpointPrompt(prompts)
	defer end()
	prompts = review.WithNote(prompts, s.startChanges(cp))
	// What the jobs changed meanwhile goes into this prompt's checkpoint, before it closes.
	defer s.ws.Jobs().Observe(ctx)
	res, err := s.agent.PromptMessages(ctx, prompts, s.sink(true))
	out := PromptResult{Messages: res.Messages, StopReason: res.StopReason, Terminated: res.Terminated}
	if errors.Is(err, loop.ErrNoProvider) {
		return out, s.noModelError()
	}
	if err == nil && res.Aborted {
		out.StopReason = llm.StopAborted
	}
	return out, err
}

// Execute runs one batch with no model (see loop.Agent.Execute). mode "" is the session's.
func (s *Session) Execute(ctx context.Context, calls []llm.ToolCall, mode string) (BatchResult, error) {
	switch mode {
	case "", string(toolexec.Parallel), string(toolexec.Sequential):
	default:
		return BatchResult{}, invalid("toolExecution must be %q or %q, not %q", toolexec.Parallel, toolexec.Sequential, mode)
	}
	s.gates.Enter()
	defer s.gates.Leave()
	out := s.agent.Execute(ctx, calls, toolexec.Mode(mode), s.sink(false))
	return BatchResult{Messages: out.Messages, Terminate: out.Terminate && !out.Aborted, Aborted: out.Aborted}, nil
}

// Steer queues a message for the running prompt, taken after its current turn.
func (s *Session) Steer(text string) { s.agent.Steer(llm.NewUser(text)) }

// FollowUp queues a message taken when the running prompt would stop.
func (s *Session) FollowUp(text string) { s.agent.FollowUp(llm.NewUser(text)) }

// SteerMessage is Steer with a user message made by UserMessage. Safe for concurrent use;
// it never blocks on the run.
func (s *Session) SteerMessage(m llm.Message) { s.agent.Steer(m) }

// FollowUpMessage is FollowUp with a user message made by UserMessage. Safe for concurrent
// use; it never blocks on the run.
func (s *Session) FollowUpMessage(m llm.Message) { s.agent.FollowUp(m) }

// sink is the event sink of the session's runs: the audit log's start times, the redaction
// of progress (the results themselves are redacted by the afterToolCall chain), the
// session's file (save: a prompt's messages are transcript; a tools/execute batch's are
// not), the face, and the gates of scripted tools waiting for a call's end.
//
// A message is written to the file before its MessageEnd reaches the face, and a tool's
// result before its ToolEnd, so an editor that has seen messageEnd or toolEnd knows the
// message is on disk (in the kernel: a kill -9 of pid loses nothing). The file is fsynced in the background at each turn's end, at most every
// second (see syncSoon), and when the session is closed.
func (s *Session) sink(save bool) event.Sink {
	return s.starts.Sink(func(ev event.Event) {
		switch e := ev.(type) {
		case event.ToolUpdate:
			if s.host.redactor != nil {
				e.Partial.Content = s.host.redactor.Progress(e.Partial.Content)
				ev = e
			}
		case event.ToolEnd:
			if save && e.Message != nil {
				s.saveResult(e.Message)
			}
			if s.changes != nil {
				if fs := s.changes.TakeCallFiles(review.CallKey(s.id, e.ToolCallID)); fs != nil {
					e.Files = fs
					ev = e
				}
			}
		case event.MessageEnd:
			if save {
				s.saveMessage(e.Message)
			}
		case event.TurnEnd:
			if save {
				s.syncSoon()
			}
		}
		s.face.Emit(s, ev)
		if s.sub.child != nil {
			s.observe(ev)
		}
		s.afterEvent(ev, save)
		if e, ok := ev.(event.ToolEnd); ok {
			s.gates.Ended(e.ToolCallID)
			s.decisions.Forget(e.ToolCallID)
		}
	})
}
