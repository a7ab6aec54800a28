// Package replay is the test server of the provider tests: an httptest server that answers
// each request with the next scripted Step, most often a recorded event stream from
// provider/testdata, and records what it was sent. With it go the sink that records what
// a provider streams (Recorder), a scripted transport without a network for synctest
// bubbles (Transport), and the setup and checks the provider tests share (Sleeps, Stream,
// StreamCancelled, Check, CheckBody).
//
// The entry point is New. It is used by tests only.
package replay

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// Step is one scripted answer.
type Step struct {
	// Status is the HTTP status (default 200).
	Status int
	// Header is added to the answer.
	Header map[string]string
	// Body is written as it is (an error body, say), with Content-Type application/json
	// unless Header sets one.
	Body string
	// File is a recorded stream, written with Content-Type text/event-stream. It replaces
	// Body.
	File string
	// Drop closes the connection abruptly after writing File, without ending the body.
	Drop bool
	// HoldAfter, when positive, writes only File's first HoldAfter events, then waits
	// until the request's context ends and closes Server.Cancelled.
	HoldAfter int
	// Hold does what a positive HoldAfter does, also with HoldAfter 0: the headers go out
	// with no event after them.
	Hold bool
	// NoHeaders reads the request and then sends nothing, not even the headers, until the
	// request's context ends; then it closes Server.Cancelled.
	NoHeaders bool
}

// Request is what the server was sent.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server is a replay server. Close it (New registers that with t.Cleanup).
type Server struct {
	*httptest.Server
	// Cancelled is closed when a Hold or NoHeaders step saw its request's context end.
	Cancelled chan struct{}
	// Waiting receives a value each time a Hold or NoHeaders step starts waiting for its
	// request's context to end (it is buffered; a test may ignore it).
	Waiting chan struct{}

	t      testing.TB
	mu     sync.Mutex
	steps  []Step
	reqs   []Request
	cancel sync.Once
}

// New starts a server answering request n with steps[n], and the last step for every
// request after that. Files are read when the server starts, so a missing one fails t now.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	if len(steps) == 0 {
		t.Fatal("replay.New: no steps")
	}
	for i, s := range steps {
		if s.File != "" {
			b, err := os.ReadFile(s.File)
			if err != nil {
				t.Fatalf("replay.New: %v", err)
			}
			steps[i].Body = string(b)
		}
	}
	s := &Server{t: t, steps: steps, Cancelled: make(chan struct{}), Waiting: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server was sent so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	step := s.steps[min(n, len(s.steps)-1)]
	s.mu.Unlock()

	if step.NoHeaders {
		s.hold(r)
		return
	}
	for k, v := range step.Header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		if step.File != "" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	status := step.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	flusher := w.(http.Flusher)
	switch {
	case step.Hold || step.HoldAfter > 0:
		events := strings.SplitAfter(strings.ReplaceAll(step.Body, "\r\n", "\n"), "\n\n")
		io.WriteString(w, strings.Join(events[:min(step.HoldAfter, len(events))], ""))
		flusher.Flush()
		s.hold(r)
	case step.Drop:
		io.WriteString(w, step.Body)
		flusher.Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			s.t.Errorf("replay: hijack: %v", err)
			return
		}
		conn.Close()
	default:
		io.WriteString(w, step.Body)
	}
}

// hold waits until r's context ends (the client gave up on it), then closes Cancelled.
func (s *Server) hold(r *http.Request) {
	select {
	case s.Waiting <- struct{}{}:
	default:
	}
	<-r.Context().Done()
	s.cancel.Do(func() { close(s.Cancelled) })
}
