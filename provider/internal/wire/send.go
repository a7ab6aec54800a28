// This file sends one model request, retrying rate-limited and failed answers (429, 5xx)
// with backoff that honours Retry-After, within bounded attempts and total wait.

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
// the first answer with a 2xx status; the caller closes its body. A 408, 409, 429 or 5xx
// answer is retried after a wait: the one the server asks for in retry-after-ms or
// Retry-After (seconds or an HTTP date), else Base doubled per retry. A header
// x-should-retry: true or false overrides the status, and a 429 that says the quota is
// exhausted is not retried.
//
// Send returns a non-nil *Failure for a non-2xx answer it gives up on, and a non-nil
// error when there was no answer: the request could not be made or sent, or ctx ended
// (then the error is ctx's, possibly wrapped).
func Send(ctx context.Context, client *http.Client, build func(context.Context) (*http.Request, error), r Retry) (*http.Response, *Failure, error) {
	r = r.withDefaults()
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		req, err := build(ctx)
		if err != nil {
			return nil, nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, err
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
		fail := &Failure{Status: resp.StatusCode, Body: body, Attempts: attempt}
		if hasAsked {
			fail.RetryAfter = asked
		}
		if attempt >= r.Attempts || !retryable(resp, body) {
			return nil, fail, nil
		}
		wait := asked
		if !hasAsked {
			wait = r.Base << (attempt - 1)
		}
		if waited+wait > r.MaxWait {
			return nil, fail, nil
		}
		if err := r.Sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		waited += wait
	}
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
