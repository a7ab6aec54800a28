// This file runs one streaming model call from request to returned message: the part of
// llm.Provider.Stream that both APIs share (sending, failure text, abort, the event loop).

package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/pid-agent/pid/llm"
)

// Call is one streaming request to make.
type Call struct {
	Info *Info
	// Client makes the requests; providers pass one from GuardClient.
	Client   *http.Client
	Retry    Retry
	Timeouts Timeouts
	// Key is redacted from every error text the call returns, and from the text and
	// thinking the server streams back (Builder.Hide).
	Key string
	// Endpoint is the URL Build posts to, for the base URL a refused redirect suggests.
	Endpoint string
	// Build returns a new request bound to ctx, once per attempt.
	Build func(ctx context.Context) (*http.Request, error)
}

// PostJSON returns a Call.Build that posts body to url as JSON and asks for an event
// stream, with header's fields added: a new request, bound to ctx, per attempt.
func PostJSON(url string, body []byte, header http.Header) func(ctx context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "text/event-stream")
		for k, vs := range header {
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
		return r, nil
	}
}

// Decoder reads one API's events into a Builder.
type Decoder interface {
	// Event reads one event. It returns terminal when the event ends the stream
	// ([DONE], message_stop), and errText when the event reports an error or cannot be
	// read, which ends the call with StopError.
	Event(ev Event) (terminal bool, errText string)
	// End is called once the stream is over: after a terminal event (terminal true) or at
	// the end of the body. It returns the stop reason and, with StopError, its text;
	// ok false means the stream stopped short of a complete answer.
	End(terminal bool) (stop llm.StopReason, errText string, ok bool)
}

// Aborted is the error text of a call whose context ended, as the loop words it.
const Aborted = "Operation aborted"

// Run makes the call and streams its answer through a decoder into b, and returns the
// message as llm.Provider.Stream must: never panicking, failures as StopError with text a
// person can act on (with c.Key redacted), a cancelled ctx as StopAborted promptly (the
// request is bound to ctx, so cancelling it stops the HTTP stream at once).
//
// newDec returns a decoder writing into the builder it is given; Run calls it once per
// stream it reads. A stream whose server goes silent for c.Timeouts.Idle before any block
// reached the sink is cut off and the request made again, from the budget of c.Retry,
// with b emptied (the sink has then seen only the start, which is not repeated). Once a
// block has reached the sink, a silent server ends the call with StopError and the
// content so far. Run leaves no goroutine or timer behind.
func Run(ctx context.Context, c *Call, b *Builder, newDec func(*Builder) Decoder) (msg llm.Message) {
	key := NewSecret(c.Key)
	b.Hide(key)
	defer func() {
		if p := recover(); p != nil {
			msg = b.Fail(llm.StopError, fmt.Sprintf("internal error while streaming from %s: %v", c.Info.Name, p))
		}
		msg.ErrorMessage = key.Replace(msg.ErrorMessage, Redacted)
	}()
	if ctx.Err() != nil {
		return b.Fail(llm.StopAborted, Aborted)
	}
	r, t := c.Retry.withDefaults(), c.Timeouts.withDefaults()
	var spent budget
	for {
		resp, fail, err := send(ctx, c.Client, c.Build, r, t, &spent)
		var te *TimeoutError
		switch {
		case ctx.Err() != nil:
			return b.Fail(llm.StopAborted, Aborted)
		case asRedirect(err) != nil:
			return b.Fail(llm.StopError, c.Info.Redirected(asRedirect(err), c.Endpoint))
		case errors.As(err, &te):
			return b.Fail(llm.StopError, c.Info.TimedOut(te, false))
		case err != nil:
			return b.Fail(llm.StopError, c.Info.Unreachable(err))
		case fail != nil:
			return b.Fail(llm.StopError, c.Info.Describe(*fail))
		}
		msg, stalled := stream(ctx, c, b, newDec(b), resp)
		if !stalled {
			return msg
		}
		ok, err := spent.next(ctx, r, 0, false)
		switch {
		case ctx.Err() != nil || err != nil:
			return b.Fail(llm.StopAborted, Aborted)
		case !ok:
			return b.Fail(llm.StopError, c.Info.TimedOut(&TimeoutError{Setting: IdleTimeoutSetting, After: t.Idle, Attempts: spent.attempts}, false))
		}
		b.Reset()
	}
}

// stream reads one 2xx answer through dec into b and closes its body. It reports stalled,
// with no message, when the server went silent for the idle timeout before any block
// reached the sink, so the request can be made again.
func stream(ctx context.Context, c *Call, b *Builder, dec Decoder, resp *http.Response) (msg llm.Message, stalled bool) {
	defer resp.Body.Close()

	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if ctx.Err() != nil {
			return b.Fail(llm.StopAborted, Aborted), false
		}
		if te := (*TimeoutError)(nil); errors.As(err, &te) {
			return b.Fail(llm.StopError, c.Info.TimedOut(te, false)), false
		}
		if se, ok := ParseServerError(body); ok {
			return b.Fail(llm.StopError, c.Info.StreamError(se.Type, se.Message)), false
		}
		return b.Fail(llm.StopError, c.Info.Malformed("a JSON body instead of an event stream", string(body))), false
	}

	b.Start()
	r := NewSSEReader(resp.Body)
	for {
		ev, err := r.Next()
		if ctx.Err() != nil {
			return b.Fail(llm.StopAborted, Aborted), false
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return b.Fail(llm.StopError, c.Info.Malformed("a line longer than 16 MiB", "")), false
		}
		if err != nil && err != io.EOF {
			// A connection lost after the answer was complete (stop reason seen, only the
			// closing event missing) loses nothing.
			if stop, text, ok := dec.End(false); ok {
				return finish(b, stop, text), false
			}
			var te *TimeoutError
			if errors.As(err, &te) {
				if b.Empty() {
					return llm.Message{}, true
				}
				return b.Fail(llm.StopError, c.Info.TimedOut(te, true)), false
			}
			return b.Fail(llm.StopError, c.Info.Dropped(err)), false
		}
		terminal := false
		if err == nil {
			var text string
			terminal, text = dec.Event(ev)
			if text != "" {
				return b.Fail(llm.StopError, text), false
			}
			if !terminal {
				continue
			}
		}
		stop, text, ok := dec.End(terminal)
		if !ok {
			return b.Fail(llm.StopError, c.Info.Dropped(nil)), false
		}
		return finish(b, stop, text), false
	}
}

// finish returns the message of a complete answer: StopError with text, or stop.
func finish(b *Builder, stop llm.StopReason, text string) llm.Message {
	if stop == llm.StopError {
		return b.Fail(llm.StopError, text)
	}
	return b.Done(stop)
}
