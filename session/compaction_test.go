package session_test

// Tests of automatic compaction with scripted models: the summaries never take the script's
// turns, a model that reports more usage than its window compacts once and then only after
// the context grew, and a model call is preceded by one compaction at most.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// recordingFace is a Face that keeps, in order, the compactions started ("compact:REASON")
// and the assistant messages ended ("call:TEXT", one per model call the loop made), and
// denies every question.
type recordingFace struct {
	face
	// mu guards seen.
	mu   sync.Mutex
	seen []string
}

func (f *recordingFace) Emit(_ *session.Session, e event.Event) {
	var line string
	switch e := e.(type) {
	case event.CompactionStart:
		line = "compact:" + e.Reason
	case event.MessageEnd:
		if e.Message.Role != llm.RoleAssistant {
			return
		}
		line = "call:" + e.Message.ErrorMessage
		if len(e.Message.Content) > 0 {
			line = "call:" + e.Message.Content[0].Text
		}
	default:
		return
	}
	f.mu.Lock()
	f.seen = append(f.seen, line)
	f.mu.Unlock()
}

// events returns what f saw, and forgets it.
func (f *recordingFace) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.seen
	f.seen = nil
	return out
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// lastText returns the text of the last message of a prompt's result.
func lastText(t *testing.T, s *session.Session, prompt string) string {
	t.Helper()
	res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser(prompt)})
	if err != nil {
		t.Fatalf("prompt %.20q: %v", prompt, err)
	}
	if len(res.Messages) == 0 {
		t.Fatalf("prompt %.20q: no messages", prompt)
	}
	m := res.Messages[len(res.Messages)-1]
	if m.StopReason == llm.StopError {
		return "error: " + m.ErrorMessage
	}
	if len(m.Content) == 0 {
		return ""
	}
	return m.Content[0].Text
}

// compactingSession starts a session of a scripted model with the given context window,
// compaction settings and turns, in a host of its own (user folders isolated, closed when
// the test ends), and returns it with the face that records its events.
func compactingSession(t *testing.T, window int, compaction string, turns []llm.Turn) (*session.Session, *recordingFace) {
	t.Helper()
	isolate(t)
	h := session.NewHost(session.HostOptions{})
	h.SetUp(nil)
	t.Cleanup(h.Close)
	f := &recordingFace{}
	s, err := h.New(session.Config{Cwd: t.TempDir(), Model: &session.ModelConfig{Provider: "script", ContextWindow: window,
		Compaction: []byte(compaction), Turns: turns}}, session.Options{Face: f})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// answers returns n scripted turns answering "answer 0", "answer 1", ..., each reporting
// usage (none when nil).
func answers(n int, usage *llm.Usage) []llm.Turn {
	turns := make([]llm.Turn, n)
	for i := range turns {
		turns[i] = llm.Turn{Content: []llm.Content{llm.Text(fmt.Sprintf("answer %d", i))}}
		if usage != nil {
			u := *usage // a turn's own, as the script hands it out
			turns[i].Usage = &u
		}
	}
	return turns
}

// A scripted run of 120 prompts that compacts many times on the way answers every prompt
// with its own turn: the summaries (none scripted here) never take one of the turns.
func TestScriptedCompactionStaysOnScript(t *testing.T) {
	const prompts = 120
	s, f := compactingSession(t, 8000, `{"reserveTokens":1000,"keepRecentTokens":1000}`, answers(prompts, nil))
	big := strings.Repeat("x", 2000) // about 500 tokens
	for i := range prompts {
		if got, want := lastText(t, s, fmt.Sprintf("prompt %d %s", i, big)), fmt.Sprintf("answer %d", i); got != want {
			t.Fatalf("prompt %d was answered %q, want %q (the script was shifted)", i, got, want)
		}
	}
	if n := countPrefix(f.events(), "compact:threshold"); n < 5 {
		t.Errorf("%d compactions in %d prompts of about 500 tokens with a window of 8000: the test compacts too little to mean anything", n, prompts)
	}
}

// A model that reports more usage than its window on every call compacts once, and again
// only once the context grew by what a compaction keeps (keepRecentTokens): never before
// every call. The run stays on script.
func TestOverReportedUsageDoesNotCompactEveryCall(t *testing.T) {
	const prompts = 20
	// Every answer claims 50000 tokens of a 20000-token window.
	s, f := compactingSession(t, 20000, `{"reserveTokens":2000,"keepRecentTokens":1500}`, answers(prompts, &llm.Usage{Input: 50000, Output: 10}))
	big := strings.Repeat("y", 4000) // about 1000 tokens: the context grows by 1500 in two prompts
	for i := range prompts {
		if got, want := lastText(t, s, fmt.Sprintf("prompt %d %s", i, big)), fmt.Sprintf("answer %d", i); got != want {
			t.Fatalf("prompt %d was answered %q, want %q", i, got, want)
		}
	}
	seen := f.events()
	compactions := countPrefix(seen, "compact:")
	// Between two compactions, at least two model calls: the context grew by two prompts.
	calls := -1 // model calls since the last compaction; -1 before the first
	for i, l := range seen {
		switch {
		case strings.HasPrefix(l, "compact:"):
			if calls >= 0 && calls < 2 {
				t.Errorf("event %d: a compaction %d model call(s) after the previous one; the context had not grown by keepRecentTokens:\n%s", i, calls, strings.Join(seen, "\n"))
			}
			calls = 0
		case strings.HasPrefix(l, "call:") && calls >= 0:
			calls++
		}
	}
	if compactions < 2 || compactions > prompts/2 {
		t.Errorf("%d compactions in %d prompts, want 2 to %d (once, then each time the context grew by 1500 tokens):\n%s", compactions, prompts, prompts/2, strings.Join(seen, "\n"))
	}
}

// A model whose usage is over the window and whose context is all recent messages (nothing
// to summarize yet) tries once, and does not try again before the context grew: the
// failed attempt is not repeated before every call.
func TestNothingToCompactIsNotRetriedEveryCall(t *testing.T) {
	const prompts = 10
	s, f := compactingSession(t, 20000, `{"reserveTokens":2000,"keepRecentTokens":1500}`, answers(prompts, &llm.Usage{Input: 50000, Output: 10}))
	for i := range prompts {
		if got, want := lastText(t, s, fmt.Sprintf("short prompt %d", i)), fmt.Sprintf("answer %d", i); got != want {
			t.Fatalf("prompt %d was answered %q, want %q", i, got, want)
		}
	}
	if n := countPrefix(f.events(), "compact:"); n != 1 {
		t.Errorf("%d compaction attempts in %d short prompts, want 1 (the context never grew by keepRecentTokens)", n, prompts)
	}
}

// A call that was compacted at the threshold and that the provider still refuses as too long
// is not compacted a second time: one compaction per model call, and the error stands.
func TestOneCompactionPerModelCall(t *testing.T) {
	overflow := "This model's maximum context length is 20000 tokens. However, your messages resulted in 25000 tokens."
	turns := []llm.Turn{
		{Content: []llm.Content{llm.Text("one")}, Usage: &llm.Usage{Input: 3000, Output: 10}},
		{Content: []llm.Content{llm.Text("two")}, Usage: &llm.Usage{Input: 19000, Output: 10}},
		// Compacted at the threshold first, and still too long.
		{StopReason: llm.StopError, ErrorMessage: overflow},
		{Content: []llm.Content{llm.Text("three")}},
	}
	s, f := compactingSession(t, 20000, `{"reserveTokens":2000,"keepRecentTokens":1500}`, turns)
	big := strings.Repeat("z", 4000)
	for _, p := range []string{"a " + big, "b " + big} {
		lastText(t, s, p)
	}
	f.events()
	if got := lastText(t, s, "c "+big); !strings.Contains(got, "maximum context length") {
		t.Errorf("the call compacted at the threshold and refused as too long answered %q, want the overflow error", got)
	}
	if seen := f.events(); countPrefix(seen, "compact:") != 1 || seen[0] != "compact:threshold" {
		t.Errorf("the third prompt's events %q, want one compaction (threshold) before its one model call", seen)
	}
	// The next prompt goes on with the script's next turn.
	if got := lastText(t, s, "d"); got != "three" {
		t.Errorf("the next prompt was answered %q, want three", got)
	}
}

// A scripted model's "summaries" answer its compactions in order, past them a fixed text,
// and a loaded session goes on with both scripts where its file left them: the turn after
// the last answer, the summary after the last compaction.
func TestScriptedSummariesGoOnAfterLoad(t *testing.T) {
	isolate(t)
	h := session.NewHost(session.HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	text := func(s string) llm.Turn { return llm.Turn{Content: []llm.Content{llm.Text(s)}} }
	model := &session.ModelConfig{Provider: "script", Compaction: []byte(`{"keepRecentTokens":1}`),
		Turns:     []llm.Turn{text("one"), text("two"), text("three"), text("four")},
		Summaries: []llm.Turn{text("## Goal\nfirst"), text("## Goal\nsecond")}}
	s, err := h.New(session.Config{Cwd: t.TempDir(), Model: model}, session.Options{Face: face{}})
	if err != nil {
		t.Fatal(err)
	}
	compactTo := func(s *session.Session, want string) {
		t.Helper()
		res, err := s.Compact(context.Background(), "")
		if err != nil || res.Summary != want {
			t.Fatalf("compaction: %q, %v; want the summary %q", res.Summary, err, want)
		}
	}
	for _, want := range []string{"one", "two"} {
		if got := lastText(t, s, "go on"); got != want {
			t.Fatalf("answered %q, want %q", got, want)
		}
	}
	compactTo(s, "## Goal\nfirst")
	if got := lastText(t, s, "go on"); got != "three" {
		t.Fatalf("after the compaction: answered %q, want three", got)
	}
	id := s.ID()
	if err := h.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	s, _, err = h.Load(id, session.Options{Face: face{}})
	if err != nil {
		t.Fatal(err)
	}
	compactTo(s, "## Goal\nsecond")
	if got := lastText(t, s, "go on"); got != "four" {
		t.Errorf("after the load and a compaction: answered %q, want four", got)
	}
	compactTo(s, "Summary 3 of a scripted session (its model scripts no summary for it).")
}
