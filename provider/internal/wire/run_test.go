package wire_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/internal/wire"
)

const runKey = "sk-run-Zt5Wq8Lp2Nc7Vb4Xm1"

// textDecoder reads a toy stream: each event's data is text for one text block, and
// "[DONE]" ends the answer.
type textDecoder struct {
	b    *wire.Builder
	cur  int
	done bool
}

func (d *textDecoder) Event(ev wire.Event) (bool, string) {
	if ev.Data == "[DONE]" {
		d.done = true
		return true, ""
	}
	if d.cur < 0 {
		d.cur = d.b.Open(llm.ContentText, "", "")
	}
	d.b.Append(d.cur, ev.Data)
	return false, ""
}

func (d *textDecoder) End(terminal bool) (llm.StopReason, string, bool) {
	return llm.StopEnd, "", d.done
}

func newTextDecoder(b *wire.Builder) wire.Decoder { return &textDecoder{b: b, cur: -1} }

// sse is a toy stream of the given texts, then [DONE].
func sse(texts ...string) replay.Step {
	var b strings.Builder
	for _, s := range append(texts, "[DONE]") {
		b.WriteString("data: " + s + "\n\n")
	}
	return replay.Step{Body: b.String(), Header: map[string]string{"Content-Type": "text/event-stream"}}
}

// toyCall returns a Call to srv with the timeouts to and a recorded Sleep, and the record of
// its waits.
func toyCall(srv *replay.Server, to wire.Timeouts) (*wire.Call, *replay.Sleeps) {
	var s replay.Sleeps
	endpoint := srv.URL + "/v1/toy"
	return &wire.Call{
		Info:     &wire.Info{Name: "the Toy-compatible server at " + srv.URL, Model: "toy", BaseURL: srv.URL},
		Client:   wire.GuardClient(srv.Client(), srv.URL, runKey),
		Retry:    wire.Retry{Sleep: s.Sleep},
		Timeouts: to,
		Key:      runKey,
		Endpoint: endpoint,
		Build:    wire.PostJSON(endpoint, []byte(`{"q":1}`), nil),
	}, &s
}

// run makes one Run call to srv (see toyCall) and returns the message, checked as
// replay.Check checks it, what the sink saw and the waits. It fails t when Run has not
// returned within 10 seconds (a hang is what the timeouts exist to prevent).
func run(t *testing.T, ctx context.Context, srv *replay.Server, to wire.Timeouts) (llm.Message, *replay.Recorder, *replay.Sleeps) {
	t.Helper()
	c, s := toyCall(srv, to)
	rec := &replay.Recorder{}
	done := make(chan llm.Message, 1)
	go func() { done <- wire.Run(ctx, c, wire.NewBuilder(rec.Sink), newTextDecoder) }()
	var msg llm.Message
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run hung")
	}
	replay.Check(t, msg, rec, runKey)
	return msg, rec, s
}

func wantSaid(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("error %q does not say %q", text, w)
		}
	}
}

// A server that never sends its headers: each attempt is cut off after the request
// timeout and retried with the backoff, and the call fails naming the setting.
func TestRunRequestTimeoutRetriesThenFails(t *testing.T) {
	srv := replay.New(t, replay.Step{NoHeaders: true})
	start := time.Now()
	msg, rec, s := run(t, context.Background(), srv, wire.Timeouts{Request: 30 * time.Millisecond})
	if msg.StopReason != llm.StopError || len(rec.Steps()) != 0 {
		t.Fatalf("message %+v, steps %v; want an error and nothing streamed", msg, rec.Steps())
	}
	wantSaid(t, msg.ErrorMessage, "did not start answering within 30ms (model.requestTimeoutMs)", "after 3 attempts", "raise model.requestTimeoutMs")
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if d := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, s.Got()); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	// Loose: three cut-off attempts, not a hang (the backoff waits are recorded, not slept).
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %v", el)
	}
	select {
	case <-srv.Cancelled:
	default:
		t.Error("the server never saw a cut-off request end")
	}
}

// Headers, some text, then silence: the stream is cut off after the idle timeout and the
// call ends with the text so far and an error naming the setting; it is not retried.
func TestRunIdleMidStream(t *testing.T) {
	step := sse("Hel", "lo")
	step.HoldAfter = 1
	srv := replay.New(t, step)
	// 250ms, not less: "Hel" comes with the headers and must be read before the bound.
	msg, rec, s := run(t, context.Background(), srv, wire.Timeouts{Idle: 250 * time.Millisecond})
	if msg.StopReason != llm.StopError || msg.Text() != "Hel" {
		t.Fatalf("message = %+v, want an error keeping %q", msg, "Hel")
	}
	wantSaid(t, msg.ErrorMessage, "sent nothing for 250ms in the middle of the answer (model.idleTimeoutMs)", "kept", "tool calls are not run", "Ask again", "raise model.idleTimeoutMs")
	want := []string{`start 0 ""`, `text_start 0 ""`, `text_delta 0 "Hel"`}
	if d := cmp.Diff(want, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(srv.Requests()) != 1 || len(s.Got()) != 0 {
		t.Errorf("%d requests and waits %v, want 1 and none", len(srv.Requests()), s.Got())
	}
	waitClosed(t, srv.Cancelled, "the server never saw the stream end")
}

// A server that always goes silent after its headers: the retries run out and the call
// says so.
func TestRunIdleBeforeContentExhausted(t *testing.T) {
	srv := replay.New(t, replay.Step{Hold: true, Header: map[string]string{"Content-Type": "text/event-stream"}})
	msg, rec, _ := run(t, context.Background(), srv, wire.Timeouts{Idle: 30 * time.Millisecond})
	if msg.StopReason != llm.StopError || len(msg.Content) != 0 {
		t.Fatalf("message = %+v", msg)
	}
	wantSaid(t, msg.ErrorMessage, "started the answer but then sent nothing for 30ms (model.idleTimeoutMs)", "after 3 attempts", "raise model.idleTimeoutMs")
	if d := cmp.Diff([]string{`start 0 ""`}, rec.Steps()); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("%d requests, want 3", len(srv.Requests()))
	}
}

// A cancel while the server holds back its headers ends the call at once as aborted, and
// the server sees the request end.
func TestRunCancelWhileWaitingForHeaders(t *testing.T) {
	srv := replay.New(t, replay.Step{NoHeaders: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := toyCall(srv, wire.Timeouts{})
	rec := &replay.Recorder{}
	done := make(chan llm.Message, 1)
	go func() { done <- wire.Run(ctx, c, wire.NewBuilder(rec.Sink), newTextDecoder) }()
	waitClosed(t, srv.Waiting, "the request never reached the server")
	cancel()
	var msg llm.Message
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the cancel")
	}
	if msg.StopReason != llm.StopAborted || msg.ErrorMessage != wire.Aborted || len(rec.Steps()) != 0 {
		t.Errorf("message = %+v, steps %v", msg, rec.Steps())
	}
	waitClosed(t, srv.Cancelled, "the server never saw the request end")
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests, want 1", len(srv.Requests()))
	}
}

// waitClosed waits for a value from c (or its close), failing t after 10 seconds.
func waitClosed(t *testing.T, c <-chan struct{}, failure string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal(failure)
	}
}

// fakeRun makes one Run call through a scripted transport, with the default Retry (its
// Sleep on synctest's clock), and returns the message, what the sink saw and how long it
// took on that clock. Call it inside a synctest bubble.
func fakeRun(t *testing.T, tr *replay.Transport, to wire.Timeouts) (llm.Message, *replay.Recorder, time.Duration) {
	t.Helper()
	endpoint := "http://toy.test/v1/toy"
	c := &wire.Call{
		Info:     &wire.Info{Name: "Toy", Model: "toy", BaseURL: "http://toy.test/v1"},
		Client:   wire.GuardClient(&http.Client{Transport: tr}, "http://toy.test/v1", runKey),
		Timeouts: to,
		Key:      runKey,
		Endpoint: endpoint,
		Build:    wire.PostJSON(endpoint, []byte(`{"q":1}`), nil),
	}
	rec := &replay.Recorder{}
	start := time.Now()
	msg := wire.Run(context.Background(), c, wire.NewBuilder(rec.Sink), newTextDecoder)
	replay.Check(t, msg, rec, runKey)
	return msg, rec, time.Since(start)
}

// A request timeout is retried like a 5xx: after the cut-off attempt (50ms) and the first
// backoff (1s), the next attempt's answer is used. On the fake clock the answer itself
// takes no time, so no bound can fire on it.
func TestRunRequestTimeoutThenAnswerFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := replay.NewTransport(t, replay.Answer{NoHeaders: true}, replay.Answer{Body: sse("Hel", "lo").Body})
		msg, rec, took := fakeRun(t, tr, wire.Timeouts{Request: 50 * time.Millisecond})
		if msg.StopReason != llm.StopEnd || msg.Text() != "Hello" || msg.ErrorMessage != "" {
			t.Fatalf("message = %+v", msg)
		}
		if took != 50*time.Millisecond+time.Second || tr.Requests() != 2 || rec.Steps()[0] != `start 0 ""` {
			t.Errorf("took %v, %d requests, steps %v; want 1.05s, 2, a start first", took, tr.Requests(), rec.Steps())
		}
	})
}

// Headers and then silence before any block: nothing but the start was shown, so after
// the idle timeout and the backoff the request is made again, and the sink sees one start.
func TestRunIdleBeforeContentRetriesFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := replay.NewTransport(t, replay.Answer{Silent: true}, replay.Answer{Body: sse("Hi").Body})
		msg, rec, took := fakeRun(t, tr, wire.Timeouts{Idle: 100 * time.Millisecond})
		if msg.StopReason != llm.StopEnd || msg.Text() != "Hi" {
			t.Fatalf("message = %+v", msg)
		}
		// "i" waits for the end of the block: it might start the key.
		want := []string{`start 0 ""`, `text_start 0 ""`, `text_delta 0 "H"`, `text_delta 0 "i"`, `text_end 0 ""`}
		if d := cmp.Diff(want, rec.Steps()); d != "" {
			t.Errorf("steps (-want +got):\n%s", d)
		}
		if took != 100*time.Millisecond+time.Second || tr.Requests() != 2 {
			t.Errorf("took %v with %d requests, want 1.1s and 2", took, tr.Requests())
		}
	})
}

// Silent after the headers every time: three attempts, each cut off after the idle
// timeout, with the backoff between them, then the error.
func TestRunIdleBeforeContentExhaustedFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := replay.NewTransport(t, replay.Answer{Silent: true})
		msg, rec, took := fakeRun(t, tr, wire.Timeouts{Idle: 100 * time.Millisecond})
		if msg.StopReason != llm.StopError || !strings.Contains(msg.ErrorMessage, "after 3 attempts") || len(rec.Steps()) != 1 {
			t.Fatalf("message = %+v, steps %v", msg, rec.Steps())
		}
		if want := 3*100*time.Millisecond + time.Second + 2*time.Second; took != want || tr.Requests() != 3 {
			t.Errorf("took %v with %d requests, want %v and 3", took, tr.Requests(), want)
		}
	})
}
