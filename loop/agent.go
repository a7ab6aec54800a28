// This file holds Agent: a transcript with its steering and follow-up queues and its active
// tools, kept across runs. The daemon keeps one Agent per session.

package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
)

// ErrBusy is returned by Agent.Prompt while another prompt of the same agent runs.
var ErrBusy = errors.New("a prompt is already running for this session; queue more input with steer or followUp")

// ErrNoProvider is returned by Agent.Prompt when the agent has no model provider.
var ErrNoProvider = errors.New("no model provider is configured for this session")

// AgentConfig is what an Agent is made of. The fields mean what they mean in Config.
type AgentConfig struct {
	Provider      llm.Provider
	SystemPrompt  string
	Toolbox       *toolexec.Toolbox
	InitialTools  []string // names active before any addedToolNames
	ToolExecution toolexec.Mode
	Before        toolexec.BeforeHook
	After         toolexec.AfterHook
	Screen        toolexec.ScreenHook
	ScreenWhen    func() bool
	BeforeStop    func(ctx context.Context, last *llm.Message) []llm.Message
	// TransformContext and ConvertToLlm: see Config.
	TransformContext func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)
	ConvertToLlm     func(m *llm.Message) (llm.Message, bool)
}

// Agent is one conversation. Its methods are safe for concurrent use; one prompt runs at a
// time, while Steer, FollowUp, Tools and Transcript may be called during it.
type Agent struct {
	cfg     AgentConfig
	initial *toolexec.ActiveSet

	// prompting is held by the running prompt (a one-slot semaphore).
	prompting chan struct{}

	// mu guards the fields below it.
	mu         sync.Mutex
	transcript []llm.Message
	tools      *toolexec.ActiveSet
	steering   []llm.Message
	followUps  []llm.Message
}

// NewAgent returns an agent with an empty transcript. Unknown names in InitialTools are an
// error.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.Toolbox == nil {
		var err error
		if cfg.Toolbox, err = toolexec.NewToolbox(); err != nil {
			return nil, err
		}
	}
	initial, unknown := cfg.Toolbox.Activate(cfg.InitialTools...)
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown tools %q", unknown)
	}
	return &Agent{cfg: cfg, initial: initial, tools: initial, prompting: make(chan struct{}, 1)}, nil
}

// Restore replaces the transcript with a saved one and recomputes the active tools by replay
// (R12). It fails with ErrBusy while a prompt runs.
func (a *Agent) Restore(transcript []llm.Message) error {
	select {
	case a.prompting <- struct{}{}:
	default:
		return ErrBusy
	}
	defer func() { <-a.prompting }()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.transcript = slices.Clone(transcript)
	a.tools = a.initial
	if sets := toolexec.Replay(a.initial, a.transcript); len(sets) > 0 {
		a.tools = sets[len(sets)-1]
	}
	return nil
}

// Prompt runs the loop with text as the new user message. emit receives the run's events
// (see package event). It returns ErrBusy, without running, while another prompt runs.
func (a *Agent) Prompt(ctx context.Context, text string, emit event.Sink) (Result, error) {
	return a.PromptMessages(ctx, []llm.Message{llm.NewUser(text)}, emit)
}

// PromptMessages is Prompt with any input messages.
func (a *Agent) PromptMessages(ctx context.Context, prompts []llm.Message, emit event.Sink) (Result, error) {
	if a.cfg.Provider == nil {
		return Result{}, ErrNoProvider
	}
	select {
	case a.prompting <- struct{}{}:
	default:
		return Result{}, ErrBusy
	}
	defer func() { <-a.prompting }()

	a.mu.Lock()
	history, tools := a.transcript, a.tools
	a.mu.Unlock()

	cfg := &Config{
		Provider: a.cfg.Provider, SystemPrompt: a.cfg.SystemPrompt, Tools: tools,
		ToolExecution: a.cfg.ToolExecution, Before: a.cfg.Before, After: a.cfg.After, Screen: a.cfg.Screen, ScreenWhen: a.cfg.ScreenWhen, BeforeStop: a.cfg.BeforeStop,
		TransformContext: a.cfg.TransformContext, ConvertToLlm: a.cfg.ConvertToLlm,
		Steering: func() []llm.Message { return a.drain(&a.steering) },
		FollowUp: func() []llm.Message { return a.drain(&a.followUps) },
		Emit:     emit,
	}
	res := Run(ctx, cfg, history, prompts)

	a.mu.Lock()
	a.transcript = append(a.transcript, res.Messages...)
	// a.tools may have grown during the run (Execute); keep that and add the run's tools.
	a.tools, _ = a.tools.With(res.Tools.Names())
	a.mu.Unlock()
	return res, nil
}

func (a *Agent) drain(q *[]llm.Message) []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := *q
	*q = nil
	return out
}

// Steer queues a message for the running prompt, taken after its current turn. With no
// prompt running it waits for the next one.
func (a *Agent) Steer(m llm.Message) {
	a.mu.Lock()
	a.steering = append(a.steering, m)
	a.mu.Unlock()
}

// FollowUp queues a message taken when the running prompt would stop.
func (a *Agent) FollowUp(m llm.Message) {
	a.mu.Lock()
	a.followUps = append(a.followUps, m)
	a.mu.Unlock()
}

// Tools returns the tools active now (R12).
func (a *Agent) Tools() *toolexec.ActiveSet {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tools
}

// Transcript returns a copy of the transcript.
func (a *Agent) Transcript() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.transcript)
}

// Execute runs one batch through the full pipeline with no model, against the tools active
// now. It does not add to the transcript, but addedToolNames in its results activate tools
// for later batches and prompts. mode "" uses the agent's ToolExecution.
func (a *Agent) Execute(ctx context.Context, calls []llm.ToolCall, mode toolexec.Mode, emit event.Sink) toolexec.Outcome {
	if mode == "" {
		mode = a.cfg.ToolExecution
	}
	a.mu.Lock()
	tools, history := a.tools, a.transcript
	a.mu.Unlock()
	out := toolexec.Run(ctx, &toolexec.Config{Mode: mode, Before: a.cfg.Before, After: a.cfg.After, Screen: a.cfg.Screen, ScreenWhen: a.cfg.ScreenWhen, Emit: emit}, toolexec.Batch{Calls: calls, Tools: tools, Context: history})
	var added []string
	for _, m := range out.Messages {
		added = append(added, m.AddedToolNames...)
	}
	if len(added) > 0 {
		a.mu.Lock()
		var unknown []string
		a.tools, unknown = a.tools.With(added)
		a.mu.Unlock()
		if len(unknown) > 0 && emit != nil {
			emit(event.Warning{Message: fmt.Sprintf("addedToolNames names unknown tools %q; ignored", unknown)})
		}
	}
	return out
}
