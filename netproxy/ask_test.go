// The question's timing on synctest's clock: a connection waits at most 60 s for an answer
// and is then refused, and connections waiting for the same answer share one question.

package netproxy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestAskTimeout: an Asker that does not answer (ignoring its context) holds the connection
// exactly AskTimeout, then the connection is refused with the reason saying so; the caller
// is not asked again about that host; an Asker that gives up when its context ends gives
// the same refusal.
func TestAskTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var asked atomic.Int32
		p, err := New(Config{
			Asker: AskerFunc(func(ctx context.Context, q Question) (Answer, error) {
				asked.Add(1)
				if q.Host == "polite.test" {
					<-ctx.Done()
					return Answer{}, ctx.Err()
				}
				<-release // ignores ctx
				return Answer{Decision: Allow}, nil
			}),
			Resolver: newResolver(nil),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := p.Register(Caller{ID: "call-7"})
		for _, host := range []string{"slow.test", "polite.test"} {
			start := time.Now()
			err = p.Authorize(context.Background(), c, host, 443)
			if waited := time.Since(start); waited != AskTimeout {
				t.Errorf("%s: the connection waited %v, want %v", host, waited, AskTimeout)
			}
			var re *RefusedError
			if !errors.As(err, &re) || re.Refusal.Reason != "not in the allowed hosts; no answer within 60 s" {
				t.Errorf("%s: %v, want a refusal saying no answer came", host, err)
			}
		}
		start := time.Now()
		err = p.Authorize(context.Background(), c, "slow.test", 443)
		if !errors.As(err, new(*RefusedError)) || time.Since(start) != 0 || asked.Load() != 2 {
			t.Errorf("second connection: %v after %v, %d questions; want an immediate refusal, 2 questions", err, time.Since(start), asked.Load())
		}
		close(release)
	})
}

// TestAskShared: five connections of one caller to one unknown host wait for one question;
// the answer lets them all through.
func TestAskShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var asked atomic.Int32
		p, err := New(Config{Asker: AskerFunc(func(ctx context.Context, q Question) (Answer, error) {
			asked.Add(1)
			<-gate
			return Answer{Decision: Allow}, nil
		})})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := p.Register(Caller{ID: "call-8"})
		var wg sync.WaitGroup
		errs := make([]error, 5)
		for i := range errs {
			wg.Go(func() { errs[i] = p.Authorize(context.Background(), c, "shared.test", 443) })
		}
		synctest.Wait() // every connection waits
		if n := asked.Load(); n != 1 {
			t.Errorf("%d questions while 5 connections wait, want 1", n)
		}
		close(gate)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("connection %d: %v", i, err)
			}
		}
	})
}

// TestAskClosed: Close refuses the connections waiting for an answer at once.
func TestAskClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := New(Config{Asker: AskerFunc(func(ctx context.Context, q Question) (Answer, error) {
			<-ctx.Done()
			return Answer{}, ctx.Err()
		})})
		if err != nil {
			t.Fatal(err)
		}
		c := p.Register(Caller{ID: "call-9"})
		done := make(chan error)
		go func() { done <- p.Authorize(context.Background(), c, "waiting.test", 443) }()
		synctest.Wait()
		start := time.Now()
		p.Close()
		err = <-done
		var re *RefusedError
		if !errors.As(err, &re) || re.Refusal.Reason != "the proxy is closing" || time.Since(start) != 0 {
			t.Errorf("%v after %v, want an immediate refusal (the proxy is closing)", err, time.Since(start))
		}
	})
}
