// This file is a scripted http.RoundTripper without a network, for tests that run in a
// testing/synctest bubble (which real connections cannot join): there a silent server
// waits on the fake clock, and a timeout fires at an exact instant.

package replay

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
)

// Answer is one scripted answer of a Transport.
type Answer struct {
	// NoHeaders answers nothing until the request's context ends, then fails with its
	// error, as a client sees a server that never sends headers.
	NoHeaders bool
	// Silent answers 200 with an event stream whose body, after Body (or File), says
	// nothing until the request's context ends: a server that stalls.
	Silent bool
	// Body is a stream answered whole with status 200.
	Body string
	// File is a recorded stream, answered as Body is. It replaces Body.
	File string
}

// Transport answers request n with answers[n], and the last answer for every request
// after that. It is safe for concurrent use.
type Transport struct {
	answers []Answer
	bodies  []string

	mu sync.Mutex
	n  int
}

// NewTransport returns a Transport; files are read now, so a missing one fails t now.
func NewTransport(t testing.TB, answers ...Answer) *Transport {
	t.Helper()
	if len(answers) == 0 {
		t.Fatal("replay.NewTransport: no answers")
	}
	tr := &Transport{answers: answers, bodies: make([]string, len(answers))}
	for i, a := range answers {
		tr.bodies[i] = a.Body
		if a.File != "" {
			b, err := os.ReadFile(a.File)
			if err != nil {
				t.Fatalf("replay.NewTransport: %v", err)
			}
			tr.bodies[i] = string(b)
		}
	}
	return tr
}

// Requests returns how many requests the transport was asked to make.
func (tr *Transport) Requests() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.n
}

// RoundTrip implements http.RoundTripper.
func (tr *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	tr.mu.Lock()
	i := min(tr.n, len(tr.answers)-1)
	tr.n++
	tr.mu.Unlock()
	a := tr.answers[i]
	ctx := req.Context()
	if a.NoHeaders {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var body io.ReadCloser = io.NopCloser(strings.NewReader(tr.bodies[i]))
	if a.Silent {
		body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(strings.NewReader(tr.bodies[i]), silentBody{ctx}), silentBody{ctx}}
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       body,
		Request:    req,
	}, nil
}

// silentBody is a body that sends nothing until its request's context ends.
type silentBody struct{ ctx context.Context }

func (b silentBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (silentBody) Close() error { return nil }
