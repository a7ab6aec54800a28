// This file bounds how long a request may wait on a silent server: for its response
// headers (Timeouts.Request) and, once they came, for each next byte of the body
// (Timeouts.Idle), so a stalled server fails the call instead of hanging it.

package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Default timeouts, used when a Timeouts field is 0 or less.
const (
	DefaultRequestTimeout = 60 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
)

// The settings that error text names, as a person writes them in the model configuration.
const (
	RequestTimeoutSetting = "model.requestTimeoutMs"
	IdleTimeoutSetting    = "model.idleTimeoutMs"
)

// Timeouts bound the waits of one request on its server. Zero fields take their defaults.
type Timeouts struct {
	// Request bounds the wait for the response headers, redirects included, per attempt
	// (default DefaultRequestTimeout). An attempt that passes it is cut off and retried
	// as a 5xx answer is.
	Request time.Duration
	// Idle bounds the wait for the next bytes of a response body once its headers came
	// (default DefaultIdleTimeout). A body that passes it is cut off, and its next Read
	// returns a *TimeoutError.
	Idle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Request <= 0 {
		t.Request = DefaultRequestTimeout
	}
	if t.Idle <= 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}

// TimeoutError is a request cut off because its server said nothing for too long.
type TimeoutError struct {
	// Setting is the configuration that bounds the wait: RequestTimeoutSetting when no
	// response headers came, IdleTimeoutSetting when the body stopped.
	Setting string
	// After is the bound that passed.
	After time.Duration
	// Attempts is the number of requests made, the first included (0 when unknown).
	Attempts int
}

// Error implements error.
func (e *TimeoutError) Error() string {
	if e.Setting == RequestTimeoutSetting {
		return fmt.Sprintf("no response headers within %s (%s)", Duration(e.After), e.Setting)
	}
	return fmt.Sprintf("no data for %s (%s)", Duration(e.After), e.Setting)
}

// Duration writes d for a person: whole seconds as "60s", anything else as Go writes it
// ("50ms", "1.5s").
func Duration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// Causes of an attempt's context ending early; they never leave this package.
var (
	errNoHeaders = errors.New("response headers timed out")
	errIdle      = errors.New("response body idle")
)

// idleBody is a response body whose reads must not pause longer than idle: a timer,
// pushed back by every read that returns bytes, ends the attempt's context (which cuts
// the connection and so ends a blocked Read) when it fires. Close stops the timer and ends
// the context, so nothing outlives the body. Read and Close follow io.ReadCloser: one
// reader, and Close may come from another goroutine.
type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	timer  *time.Timer
}

// newIdleBody wraps rc, whose request is bound to ctx, and starts the idle timer.
func newIdleBody(rc io.ReadCloser, ctx context.Context, cancel context.CancelCauseFunc, idle time.Duration) *idleBody {
	b := &idleBody{rc: rc, ctx: ctx, cancel: cancel, idle: idle}
	b.timer = time.AfterFunc(idle, func() { cancel(errIdle) })
	return b
}

// Read reads from the body. A read cut off by the idle timer returns a *TimeoutError in
// place of the transport's error.
func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		// When the timer has just fired this schedules it again, which only ends the
		// already ended context again.
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && context.Cause(b.ctx) == errIdle {
		err = &TimeoutError{Setting: IdleTimeoutSetting, After: b.idle}
	}
	return n, err
}

// Close stops the timer, closes the body and ends the attempt's context.
func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
