// This file tests StartRun: what a SessionStart run said reaches the first prompt once, a
// prompt does not wait past its own context, and closing the session stops the run.

package hooks

import (
	"context"
	"testing"
)

func TestStartRunContextOnce(t *testing.T) {
	var r StartRun
	if got := r.Context(context.Background()); got != "" {
		t.Errorf("Context before Start = %q", got)
	}
	gate := make(chan struct{})
	r.Start(true, func(context.Context) []string {
		<-gate
		return []string{"branch main", "3 open issues"}
	})
	got := make(chan string)
	go func() { got <- r.Context(context.Background()) }()
	close(gate)
	if s := <-got; s != "branch main\n\n3 open issues" {
		t.Errorf("Context = %q, want both outputs joined", s)
	}
	if s := r.Context(context.Background()); s != "" {
		t.Errorf("second Context = %q, want it taken by the first", s)
	}
	r.Stop()
}

func TestStartRunWithoutHooks(t *testing.T) {
	var r StartRun
	r.Start(false, func(context.Context) []string {
		t.Error("run called without hooks")
		return nil
	})
	if s := r.Context(context.Background()); s != "" {
		t.Errorf("Context = %q", s)
	}
	r.Stop()
}

func TestStartRunContextCancelled(t *testing.T) {
	var r StartRun
	gate := make(chan struct{})
	r.Start(true, func(context.Context) []string {
		<-gate
		return []string{"late"}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := r.Context(ctx); s != "" {
		t.Errorf("Context with a done ctx = %q", s)
	}
	close(gate)
	if s := r.Context(context.Background()); s != "late" {
		t.Errorf("Context after the run = %q, want what it said kept", s)
	}
	r.Stop()
}

func TestStartRunStop(t *testing.T) {
	var r StartRun
	running := make(chan struct{})
	ended := false
	r.Start(true, func(ctx context.Context) []string {
		close(running)
		<-ctx.Done()
		ended = true
		return []string{"stopped"}
	})
	<-running
	r.Stop()
	if !ended {
		t.Error("Stop returned before the run ended")
	}
	if s := r.Context(context.Background()); s != "" {
		t.Errorf("Context after Stop = %q, want a stopped run's output dropped", s)
	}
	r.Start(true, func(context.Context) []string {
		t.Error("a run started after Stop")
		return nil
	})
	if s := r.Context(context.Background()); s != "" {
		t.Errorf("Context of a Start after Stop = %q", s)
	}
}
