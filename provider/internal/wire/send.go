// This file sends one model request, retrying rate-limited and failed answers (429, 5xx)
// and attempts that got no headers in time, with backoff that honours Retry-After, within
// bounded attempts and total wait.

package wire

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry bounds the retries of one request. Zero fields take their defaults.
type Retry struct {
	// Attempts is the most requests one call makes, the first included (default 3).
	Attempts int
	// MaxWait bounds the total time spent waiting between attempts (default 60s). When the
	// next wait would pass it, the call fails at once with the server's answer.
	MaxWait time.Duration
	// Base is the first wait when the server asks for none; it doubles per retry
	// (default 1s).
	Base time.Duration
	// Sleep waits d, or until ctx is done and then returns its error (default: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Retry-After dates are read against (default time.Now).
	Now func() time.Time
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 3
	}
	if r.MaxWait <= 0 {
		r.MaxWait = 60 * time.Second
	}
	if r.Base <= 0 {
		r.Base = time.Second
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxErrorBody bounds how much of a failed answer's body is read for its error text.
const maxErrorBody = 64 << 10

// Send makes the request build returns (a new one per attempt, bound to ctx) and returns
// the first answer with a 2xx status; the caller must close its body, which also stops
// its idle timer (t.Idle). A 408, 409, 429 or 5xx answer is retried after a wait: the one
// the server asks for in retry-after-ms or Retry-After (seconds or an HTTP date), else
// Base doubled per retry. A header x-should-retry: true or false overrides the status, and
// a 429 that says the quota is exhausted is not retried. An attempt that gets no response
// headers within t.Request is cut off and retried the same way (with Base doubled).
//
// Send returns a non-nil *Failure for a non-2xx answer it gives up on, and a non-nil
// error when there was no answer: the request could not be made or sent, a redirect was
// refused (a *RedirectError in the chain, see GuardClient), every attempt timed out (a
// *TimeoutError), or ctx ended (then the error is ctx's, possibly wrapped). It leaves no
// timer or goroutine behind, whatever it returns.
func Send(ctx context.Context, client *http.Client, build func(context.Context) (*http.Request, error), r Retry, t Timeouts) (*http.Response, *Failure, error) {
	var b budget
	return send(ctx, client, build, r.withDefaults(), t.withDefaults(), &b)
}

// budget counts what the retries of one call have used: attempts made and time waited.
type budget struct {
	attempts int
	waited   time.Duration
}

// next waits before another attempt: asked when hasAsked, else r.Base doubled per retry.
// It returns false, and no error, when the attempts or the total wait are used up, and
// ctx's error when ctx ends before or during the wait.
func (b *budget) next(ctx context.Context, r Retry, asked time.Duration, hasAsked bool) (bool, error) {
	if b.attempts >= r.Attempts {
		return false, nil
	}
	wait := asked
	if !hasAsked {
		wait = r.Base << (b.attempts - 1)
	}
	if b.waited+wait > r.MaxWait {
		return false, nil
	}
	if err := r.Sleep(ctx, wait); err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	b.waited += wait
	return true, nil
}

// send is Send with the defaults applied and the budget kept by the caller, so that Run
// can spend what is left on a stream that stalls before its first block.
func send(ctx context.Context, client *http.Client, build func(context.Context) (*http.Request, error), r Retry, t Timeouts, b *budget) (*http.Response, *Failure, error) {
	for {
		b.attempts++
		resp, timedOut, err := do(ctx, client, build, t)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, err
		}
		if timedOut {
			ok, err := b.next(ctx, r, 0, false)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, &TimeoutError{Setting: RequestTimeoutSetting, After: t.Request, Attempts: b.attempts}
			}
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		if err != nil && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		asked, hasAsked := retryAfter(resp.Header, r.Now())
		fail := &Failure{Status: resp.StatusCode, Body: body, Attempts: b.attempts}
		if hasAsked {
			fail.RetryAfter = asked
		}
		if first := resp.Request; first != nil {
			for first.Response != nil && first.Response.Request != nil {
				first = first.Response.Request
			}
			if !SameOrigin(first.URL, resp.Request.URL) {
				fail.RedirectedTo = resp.Request.URL.Redacted()
			}
		}
		if !retryable(resp, body) {
			return nil, fail, nil
		}
		ok, err := b.next(ctx, r, asked, hasAsked)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, fail, nil
		}
	}
}

// do makes one attempt. It reports timedOut when no response headers came within
// t.Request (the attempt is then cut off and nothing of it is left open). A response it
// returns has its body wrapped in an idleBody, whose Close ends the attempt's context.
func do(ctx context.Context, client *http.Client, build func(context.Context) (*http.Request, error), t Timeouts) (resp *http.Response, timedOut bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	req, err := build(actx)
	if err != nil {
		cancel(nil)
		return nil, false, err
	}
	timer := time.AfterFunc(t.Request, func() { cancel(errNoHeaders) })
	resp, err = client.Do(req)
	if !timer.Stop() {
		// The timer fired: the attempt was cut off, or its answer came as it fired and
		// its body is cut off already.
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, true, nil
	}
	if err != nil {
		cancel(nil)
		return nil, false, err
	}
	resp.Body = newIdleBody(resp.Body, actx, cancel, t.Idle)
	return resp, false, nil
}

func retryable(resp *http.Response, body []byte) bool {
	switch strings.ToLower(resp.Header.Get("x-should-retry")) {
	case "true":
		return true
	case "false":
		return false
	}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		se, _ := ParseServerError(body)
		return !isQuota(strings.ToLower(se.Type + " " + se.Message))
	case s == http.StatusRequestTimeout, s == http.StatusConflict, s >= 500:
		return true
	}
	return false
}

// retryAfter reads the wait a server asks for: retry-after-ms (milliseconds, OpenAI), else
// Retry-After in seconds or as an HTTP date. A date in the past is a wait of 0.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
