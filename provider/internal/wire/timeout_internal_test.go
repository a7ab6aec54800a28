package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pipeBody is a response body fed by a pipe, cut off when its request's context ends (as
// the transport cuts a connection): what a Read blocked on a silent server sees.
func pipeBody(ctx context.Context) (io.ReadCloser, *io.PipeWriter) {
	pr, pw := io.Pipe()
	go func() {
		<-ctx.Done()
		pr.CloseWithError(ctx.Err())
	}()
	return pr, pw
}

// Every read that brings bytes pushes the idle deadline back; the first silence longer
// than the bound cuts the body off exactly then, with a *TimeoutError naming the setting.
// The clock is synctest's, so the instants are exact.
func TestIdleBodyFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		rc, pw := pipeBody(ctx)
		body := newIdleBody(rc, ctx, cancel, 100*time.Millisecond)
		defer body.Close()
		go func() {
			for range 10 {
				time.Sleep(60 * time.Millisecond) // below the bound, ten times: 600ms in all
				pw.Write([]byte("x"))
			}
			// Then silence, the pipe left open: a stalled server.
		}()
		start := time.Now()
		buf := make([]byte, 8)
		got := 0
		var err error
		for err == nil {
			var n int
			n, err = body.Read(buf)
			got += n
		}
		var te *TimeoutError
		if !errors.As(err, &te) || te.Setting != IdleTimeoutSetting || te.After != 100*time.Millisecond {
			t.Fatalf("read error = %v, want a TimeoutError for %s after 100ms", err, IdleTimeoutSetting)
		}
		if got != 10 {
			t.Errorf("read %d bytes before the timeout, want 10", got)
		}
		if el := time.Since(start); el != 700*time.Millisecond {
			t.Errorf("cut off after %v, want 700ms (the last byte at 600ms, plus 100ms)", el)
		}
		if !strings.Contains(err.Error(), "no data for 100ms (model.idleTimeoutMs)") {
			t.Errorf("error text %q", err)
		}
	})
}

// Close stops the idle timer and ends the request's context; nothing is left running
// (synctest.Test fails on a goroutine left blocked in the bubble).
func TestIdleBodyCloseStopsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		rc, _ := pipeBody(ctx)
		body := newIdleBody(rc, ctx, cancel, time.Second)
		body.Close()
		if context.Cause(ctx) != context.Canceled {
			t.Errorf("cause after Close = %v, want context.Canceled", context.Cause(ctx))
		}
		time.Sleep(2 * time.Second)
		if context.Cause(ctx) == errIdle {
			t.Error("the idle timer fired after Close")
		}
	})
}

// stallTransport answers after delay (an empty 200 with a pipe body), or never when delay
// is negative, and counts its calls. A request whose context ends first gets its error.
type stallTransport struct {
	delay time.Duration
	calls atomic.Int32
}

func (s *stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.calls.Add(1)
	var after <-chan time.Time
	if s.delay >= 0 {
		after = time.After(s.delay)
	}
	select {
	case <-after:
		body, _ := pipeBody(req.Context())
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body, Request: req}, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

func post(ctx context.Context) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodPost, "http://model.test/v1/x", strings.NewReader("{}"))
}

// No headers ever: each attempt is cut off at the request timeout, the default backoff
// (1s, 2s) runs between them, and Send gives up after the attempts with a TimeoutError.
func TestSendRequestTimeoutFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &stallTransport{delay: -1}
		start := time.Now()
		resp, fail, err := Send(context.Background(), &http.Client{Transport: tr}, post, Retry{}, Timeouts{Request: 50 * time.Millisecond})
		var te *TimeoutError
		if resp != nil || fail != nil || !errors.As(err, &te) {
			t.Fatalf("resp %v fail %v err %v, want a TimeoutError", resp, fail, err)
		}
		if te.Setting != RequestTimeoutSetting || te.Attempts != 3 || te.After != 50*time.Millisecond {
			t.Errorf("error = %+v", te)
		}
		if el, want := time.Since(start), 3*50*time.Millisecond+time.Second+2*time.Second; el != want {
			t.Errorf("gave up after %v, want %v (three timeouts and the backoff)", el, want)
		}
		if tr.calls.Load() != 3 {
			t.Errorf("%d attempts, want 3", tr.calls.Load())
		}
	})
}

// Headers just inside the bound are an answer, and the request timeout does not reach
// into the body: after it passes, the body is still open and only the idle timeout ends it.
func TestSendHeadersInTimeFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &stallTransport{delay: 49 * time.Millisecond}
		resp, fail, err := Send(context.Background(), &http.Client{Transport: tr}, post, Retry{}, Timeouts{Request: 50 * time.Millisecond, Idle: time.Second})
		if err != nil || fail != nil {
			t.Fatalf("fail %v err %v", fail, err)
		}
		defer resp.Body.Close()
		start := time.Now()
		_, err = resp.Body.Read(make([]byte, 1))
		var te *TimeoutError
		if !errors.As(err, &te) || te.Setting != IdleTimeoutSetting {
			t.Fatalf("read error = %v, want the idle timeout", err)
		}
		if el := time.Since(start); el != time.Second {
			t.Errorf("the body was cut off after %v, want 1s (the idle timeout, not the request timeout)", el)
		}
		if tr.calls.Load() != 1 {
			t.Errorf("%d attempts, want 1", tr.calls.Load())
		}
	})
}

// A cancel during the wait for headers ends Send with the context's error, not a timeout,
// and before the request timeout.
func TestSendCancelBeforeHeadersFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		start := time.Now()
		_, _, err := Send(ctx, &http.Client{Transport: &stallTransport{delay: -1}}, post, Retry{}, Timeouts{Request: time.Second})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if el := time.Since(start); el != 10*time.Millisecond {
			t.Errorf("returned after %v, want 10ms", el)
		}
	})
}
