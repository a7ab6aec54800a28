package session

// Thinking survives everything (issue 32): a thinking block's signature and a redacted
// block reach the model again after a load, in a fork of the saved session, in the messages
// a compaction keeps (also loaded again) and after a rewind, all with the real store. Each
// of those reads the session file, whose fast reader dropped both.

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/internal/xdg/xdgtest"
	"github.com/pid-agent/pid/llm"
)

// tap is a session's model with the messages of each request it is sent recorded.
type tap struct {
	llm.Provider
	mu   sync.Mutex
	sent [][]llm.Message
}

func (t *tap) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	t.mu.Lock()
	t.sent = append(t.sent, slices.Clone(req.Messages))
	t.mu.Unlock()
	return t.Provider.Stream(ctx, req, sink)
}

// last returns the messages of the last request.
func (t *tap) last() []llm.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent[len(t.sent)-1]
}

// tapped puts a tap on s's model and returns it.
func tapped(s *Session) *tap {
	s.model.mu.Lock()
	defer s.model.mu.Unlock()
	m := *s.model.cur
	tp := &tap{Provider: m.Provider}
	m.Provider = tp
	s.model.cur = &m
	return tp
}

// thinkingSent returns the thinking blocks of messages, as "thinking|signature|redacted".
func thinkingSent(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Type == llm.ContentThinking {
				r := ""
				if c.Redacted {
					r = "redacted"
				}
				out = append(out, c.Thinking+"|"+c.Signature+"|"+r)
			}
		}
	}
	return out
}

func TestThinkingSurvivesLoadForkCompactionRewind(t *testing.T) {
	xdgtest.Isolate(t)
	h := NewHost(HostOptions{})
	h.SetUp(nil)
	defer h.Close()
	long := strings.Repeat("and so on ", 60) // a turn of about 150 tokens
	turn := func(n string) llm.Turn {
		return llm.Turn{Content: []llm.Content{
			{Type: llm.ContentThinking, Thinking: "think " + n, Signature: "sig-" + n},
			{Type: llm.ContentThinking, Signature: "withheld-" + n, Redacted: true},
			llm.Text("answer " + n + " " + long),
		}}
	}
	var turns []llm.Turn
	for _, n := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		turns = append(turns, turn(n))
	}
	model := &ModelConfig{Provider: "script", Compaction: []byte(`{"keepRecentTokens":200}`), Turns: turns,
		Summaries: []llm.Turn{{Content: []llm.Content{llm.Text("## Goal\nkeep thinking")}}}}
	s, err := h.New(Config{Cwd: t.TempDir(), Model: model}, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(s *Session, text string) {
		t.Helper()
		res, err := s.Prompt(context.Background(), []llm.Message{llm.NewUser(text)})
		if err != nil || res.StopReason != llm.StopEnd {
			t.Fatalf("prompt %q: %v %+v", text, err, res)
		}
	}
	want := func(ns ...string) []string {
		var out []string
		for _, n := range ns {
			out = append(out, "think "+n+"|sig-"+n+"|", "|withheld-"+n+"|redacted")
		}
		return out
	}
	check := func(what string, tp *tap, ns ...string) {
		t.Helper()
		if got := thinkingSent(tp.last()); !slices.Equal(got, want(ns...)) {
			t.Errorf("%s: the model was sent the thinking %q, want %q", what, got, want(ns...))
		}
	}
	prompt(s, "one")
	prompt(s, "two")
	id := s.ID()

	// A load in a new session of the host (the file read back).
	if err := h.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	if s, _, err = h.Load(id, Options{Face: quietFace{}}); err != nil {
		t.Fatal(err)
	}
	tp := tapped(s)
	prompt(s, "three")
	check("after a load", tp, "1", "2")

	// A fork of the saved session.
	if err := h.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	fork, _, err := h.Fork(id, 6, Options{Face: quietFace{}})
	if err != nil {
		t.Fatal(err)
	}
	ftp := tapped(fork)
	prompt(fork, "four, in the fork")
	check("in a fork of the saved session", ftp, "1", "2", "3")
	if err := h.CloseSession(fork.ID()); err != nil {
		t.Fatal(err)
	}

	// A rewind to the checkpoint before prompt three, then the same prompt again.
	if s, _, err = h.Load(id, Options{Face: quietFace{}}); err != nil {
		t.Fatal(err)
	}
	cps, err := s.Checkpoints()
	if err != nil || len(cps) < 3 {
		t.Fatalf("checkpoints %v, %v: want one per prompt", cps, err)
	}
	if _, err := s.Rewind(context.Background(), cps[2].ID, "conversation", true); err != nil {
		t.Fatal(err)
	}
	tp = tapped(s)
	prompt(s, "three again")
	check("after a rewind", tp, "1", "2")

	// A compaction keeps the recent messages word for word, thinking included; and so does
	// the session loaded after it.
	if _, err := s.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	prompt(s, "five")
	// The transcript's answers are 1, 2 and 4 (the rewind took 3 back; the script went on).
	kept, all := thinkingSent(tp.last()), want("1", "2", "4")
	if len(kept) == 0 || len(kept) == len(all) || !slices.Equal(kept, all[len(all)-len(kept):]) {
		t.Fatalf("after a compaction the model was sent the thinking %q: want the kept answers' thinking (the end of %q), signed", kept, all)
	}
	if err := h.CloseSession(id); err != nil {
		t.Fatal(err)
	}
	if s, _, err = h.Load(id, Options{Face: quietFace{}}); err != nil {
		t.Fatal(err)
	}
	tp = tapped(s)
	prompt(s, "six")
	if got := thinkingSent(tp.last()); len(got) <= len(kept) || !slices.Equal(got[:len(kept)], kept) {
		t.Errorf("after a compaction and a load the model was sent the thinking %q, want %q first", got, kept)
	}
}
