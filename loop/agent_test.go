package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/toolexec"
)

func newAgent(t *testing.T, cfg loop.AgentConfig) *loop.Agent {
	t.Helper()
	a, err := loop.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Steering and follow-up messages queued while a tool runs: steering is taken after the
// current turn, before the next model call; the follow-up only once the agent would stop,
// and it starts another round.
func TestAgentSteerAndFollowUpDuringTool(t *testing.T) {
	g := newGate()
	prov := &recordingProvider{inner: llm.NewScript(
		calls(tc("c1", "wait", `{}`)),
		text("after steer"),
		text("after follow-up"),
	)}
	a := newAgent(t, loop.AgentConfig{Provider: prov, Toolbox: box(t, g.tool("wait")), InitialTools: []string{"wait"}})
	rec := &recorder{}
	done := promptAsync(context.Background(), a, "hi", rec.sink)

	<-g.started // the run is inside its first batch
	a.FollowUp(user("follow"))
	a.Steer(user("steer"))
	close(g.release)
	pr := <-done
	if pr.err != nil {
		t.Fatal(pr.err)
	}

	want := seq("AgentStart", "TurnStart", "MessageStart user hi", "MessageEnd user hi",
		"MessageStart assistant", updates("toolcall"), "MessageEnd assistant toolUse",
		"ToolStart c1", "ToolExecutionStart c1", "ToolEnd c1", "MessageStart toolResult c1", "MessageEnd toolResult c1",
		"TurnEnd assistant toolUse [c1]",
		"TurnStart", "MessageStart user steer", "MessageEnd user steer",
		"MessageStart assistant", updates("text"), "MessageEnd assistant stop", "TurnEnd assistant stop []",
		"TurnStart", "MessageStart user follow", "MessageEnd user follow",
		"MessageStart assistant", updates("text"), "MessageEnd assistant stop", "TurnEnd assistant stop []",
		"AgentEnd 7")
	if d := cmp.Diff(want, rec.compact()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	wantReqs := [][]string{
		{"user hi"},
		{"user hi", "assistant toolUse", "toolResult c1", "user steer"},
		{"user hi", "assistant toolUse", "toolResult c1", "user steer", "assistant stop", "user follow"},
	}
	if d := cmp.Diff(wantReqs, mapTags(prov.requests())); d != "" {
		t.Errorf("model requests (-want +got):\n%s", d)
	}
	if d := cmp.Diff(pr.res.Messages, a.Transcript()); d != "" {
		t.Errorf("Agent.Transcript differs from the run's messages (-run +transcript):\n%s", d)
	}
}

// gatedProvider holds its first model call until released.
type gatedProvider struct {
	inner   llm.Provider
	started chan struct{}
	release chan struct{}
	calls   counter
}

func (p *gatedProvider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	p.calls.inc()
	if p.calls.get() == 1 {
		close(p.started)
		<-p.release
	}
	return p.inner.Stream(ctx, req, sink)
}

// Messages queued while the model answers without tools: the steering message is still
// taken after that turn (the agent does not stop while steering is pending), and before the
// follow-up even though the follow-up was queued first.
func TestAgentSteerDuringFinalTurn(t *testing.T) {
	prov := &gatedProvider{inner: llm.NewScript(text("first"), text("second"), text("third")), started: make(chan struct{}), release: make(chan struct{})}
	a := newAgent(t, loop.AgentConfig{Provider: prov})
	done := promptAsync(context.Background(), a, "hi", nil)
	<-prov.started
	a.FollowUp(user("follow"))
	a.Steer(user("steer"))
	close(prov.release)
	pr := <-done
	if pr.err != nil {
		t.Fatal(pr.err)
	}
	var got []string
	for _, m := range pr.res.Messages {
		got = append(got, string(m.Role)+" "+m.Text())
	}
	want := []string{"user hi", "assistant first", "user steer", "assistant second", "user follow", "assistant third"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
}

// A second Prompt (or Restore) while one runs returns ErrBusy without running; once the
// first ends the agent takes prompts again.
func TestAgentBusy(t *testing.T) {
	g := newGate()
	prov := llm.NewScript(calls(tc("c1", "wait", `{}`)), text("done"), text("second prompt"))
	a := newAgent(t, loop.AgentConfig{Provider: prov, Toolbox: box(t, g.tool("wait")), InitialTools: []string{"wait"}})
	done := promptAsync(context.Background(), a, "first", nil)
	<-g.started

	rec := &recorder{}
	if _, err := a.Prompt(context.Background(), "second", rec.sink); !errors.Is(err, loop.ErrBusy) {
		t.Errorf("Prompt while running: err = %v, want ErrBusy", err)
	}
	if len(rec.events()) != 0 {
		t.Errorf("a refused prompt sent events: %q", rec.compact())
	}
	if err := a.Restore(nil); !errors.Is(err, loop.ErrBusy) {
		t.Errorf("Restore while running: err = %v, want ErrBusy", err)
	}
	close(g.release)
	if pr := <-done; pr.err != nil || pr.res.StopReason != llm.StopEnd {
		t.Fatalf("first prompt: %v, %q", pr.err, pr.res.StopReason)
	}
	if prov.Calls() != 2 {
		t.Errorf("model calls = %d, want 2: the refused prompt must not reach the model", prov.Calls())
	}

	res, err := a.Prompt(context.Background(), "second", nil)
	if err != nil || res.Messages[len(res.Messages)-1].Text() != "second prompt" {
		t.Fatalf("prompt after the first ended: %v, %+v", err, res)
	}
	if got := tags(a.Transcript()); len(got) != 6 || got[4] != "user second" {
		t.Errorf("transcript = %q, want both prompts' messages", got)
	}
}

// Agent.Execute runs a batch through the pipeline without a model and without touching the
// transcript, but its addedToolNames activate tools for later prompts (R12).
func TestAgentExecute(t *testing.T) {
	unlock := resultTool("unlock", toolexec.Result{Content: []llm.Content{llm.Text("ok")}, AddedToolNames: []string{"secret", "nosuch"}})
	var secretRuns counter
	prov := &recordingProvider{inner: llm.NewScript(calls(tc("p1", "secret", `{}`)), text("done"))}
	a := newAgent(t, loop.AgentConfig{Provider: prov, Toolbox: box(t, unlock, echoTool("secret", &secretRuns)), InitialTools: []string{"unlock"}})

	rec := &recorder{}
	out := a.Execute(context.Background(), []llm.ToolCall{{ID: "x1", Name: "secret"}, {ID: "x2", Name: "unlock"}}, "", rec.sink)
	if got := resultTexts(out.Messages); got["x1"] != "Tool secret not found" || got["x2"] != "ok" {
		t.Errorf("results = %q", got)
	}
	if len(a.Transcript()) != 0 {
		t.Errorf("Execute added to the transcript: %q", tags(a.Transcript()))
	}
	if d := cmp.Diff([]string{"unlock", "secret"}, a.Tools().Names()); d != "" {
		t.Errorf("tools after Execute (-want +got):\n%s", d)
	}
	if w := rec.warnings(); len(w) != 1 || !strings.Contains(w[0], "nosuch") {
		t.Errorf("warnings = %q, want one naming nosuch", w)
	}

	res, err := a.Prompt(context.Background(), "use it", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultTexts(res.Messages)["p1"]; got != "echo: {}" || secretRuns.get() != 1 {
		t.Errorf("secret in the next prompt: %q", got)
	}
	if d := cmp.Diff([]string{"unlock", "secret"}, prov.toolNames()[0]); d != "" {
		t.Errorf("first model request's tools (-want +got):\n%s", d)
	}
}

// Tools activated by Execute while a prompt runs stay active after the prompt ends, along
// with the tools the prompt itself activated.
func TestAgentExecuteDuringPrompt(t *testing.T) {
	g := newGate()
	wait := g.tool("wait")
	inner := wait.Execute
	wait.Execute = func(ctx context.Context, c toolexec.Call, u func(event.Result)) (toolexec.Result, error) {
		r, err := inner(ctx, c, u)
		r.AddedToolNames = []string{"b"}
		return r, err
	}
	unlockA := resultTool("unlockA", toolexec.Result{AddedToolNames: []string{"a"}})
	prov := llm.NewScript(calls(tc("c1", "wait", `{}`)), text("done"))
	a := newAgent(t, loop.AgentConfig{
		Provider: prov, Toolbox: box(t, wait, unlockA, echoTool("a", nil), echoTool("b", nil)),
		InitialTools: []string{"wait", "unlockA"},
	})
	done := promptAsync(context.Background(), a, "hi", nil)
	<-g.started
	a.Execute(context.Background(), []llm.ToolCall{{ID: "x1", Name: "unlockA"}}, "", nil)
	close(g.release)
	if pr := <-done; pr.err != nil {
		t.Fatal(pr.err)
	}
	if d := cmp.Diff([]string{"wait", "unlockA", "a", "b"}, a.Tools().Names()); d != "" {
		t.Errorf("tools after the prompt (-want +got):\n%s", d)
	}
}

// R12: the saved transcript, written to JSON and read back, restores the same active tools;
// a prefix of it restores the tools active at that message.
func TestAgentRestoreReplaysTools(t *testing.T) {
	// R12
	unlock := resultTool("unlock", toolexec.Result{Content: []llm.Content{llm.Text("ok")}, AddedToolNames: []string{"secret", "nosuch"}})
	tb := box(t, unlock, echoTool("secret", nil), echoTool("other", nil))
	cfg := loop.AgentConfig{
		Provider: llm.NewScript(calls(tc("c1", "unlock", `{}`)), calls(tc("c2", "secret", `{}`)), text("done")),
		Toolbox:  tb, InitialTools: []string{"unlock"},
	}
	a := newAgent(t, cfg)
	if _, err := a.Prompt(context.Background(), "hi", nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"unlock", "secret"}, a.Tools().Names()); d != "" {
		t.Fatalf("tools after the run (-want +got):\n%s", d)
	}

	saved, err := json.Marshal(a.Transcript())
	if err != nil {
		t.Fatal(err)
	}
	var loaded []llm.Message
	if err := json.Unmarshal(saved, &loaded); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a.Transcript(), loaded); d != "" {
		t.Errorf("transcript JSON round trip (-saved +loaded):\n%s", d)
	}

	b := newAgent(t, cfg)
	if err := b.Restore(loaded); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a.Tools().Names(), b.Tools().Names()); d != "" {
		t.Errorf("restored tools (-original +restored):\n%s", d)
	}
	if d := cmp.Diff(loaded, b.Transcript()); d != "" {
		t.Errorf("restored transcript (-loaded +restored):\n%s", d)
	}
	if err := b.Restore(loaded[:2]); err != nil { // user, assistant: before the unlock result
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"unlock"}, b.Tools().Names()); d != "" {
		t.Errorf("tools restored from a prefix (-want +got):\n%s", d)
	}
}

func TestNewAgentErrors(t *testing.T) {
	if _, err := loop.NewAgent(loop.AgentConfig{Toolbox: box(t), InitialTools: []string{"ghost"}}); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("unknown initial tool: err = %v, want one naming it", err)
	}
	a := newAgent(t, loop.AgentConfig{})
	if _, err := a.Prompt(context.Background(), "hi", nil); err == nil || errors.Is(err, loop.ErrBusy) {
		t.Errorf("no provider: err = %v, want a configuration error", err)
	}
}

// Messages queued while no prompt runs wait for the next one: the steering message is taken
// at its start, right after the prompt; the follow-up when that prompt would stop.
func TestAgentQueuedBeforePrompt(t *testing.T) {
	prov := &recordingProvider{inner: llm.NewScript(text("first"), text("second"))}
	a := newAgent(t, loop.AgentConfig{Provider: prov})
	a.FollowUp(user("follow"))
	a.Steer(user("steer"))
	res, err := a.Prompt(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"user hi", "user steer"}, {"user hi", "user steer", "assistant stop", "user follow"}}
	if d := cmp.Diff(want, mapTags(prov.requests())); d != "" {
		t.Errorf("model requests (-want +got):\n%s", d)
	}
	if len(res.Messages) != 5 {
		t.Errorf("run added %q", tags(res.Messages))
	}
}
