// This file is searchbench's use of one pid daemon: it starts bin/pid in folders of its own
// through internal/pidtest, which speaks JSON-RPC over the daemon's real stdin and stdout,
// and runs tool calls through tools/execute.

package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/pidtest"
)

// daemon is one running pid process. It is used from one goroutine.
type daemon struct {
	*pidtest.Process

	// mu guards onNote.
	mu     sync.Mutex
	onNote func(method string) // the running request's, called with each notification's method
}

// startDaemon starts bin with its own HOME and XDG folders under home (so no settings or
// session files of the person running the benchmark are read or written) and initializes
// it. The caller stops it with stop.
func startDaemon(bin, home string) (*daemon, error) {
	d := &daemon{}
	// The daemon's own requests are answered on the way (trust questions with "not trusted",
	// anything else with null); each notification's method goes to the running request's
	// onNote. Nothing is kept: a run may see millions of messages.
	p, err := pidtest.Start(bin, pidtest.Options{Home: home, Stderr: os.Stderr, Conn: pidtest.ConnOptions{
		Discard: true, HangGuard: time.Hour, OnMessage: d.dispatch}})
	if err != nil {
		return nil, fmt.Errorf("%w (run `make build` first)", err)
	}
	d.Process = p
	if _, err := d.request("initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

func (d *daemon) dispatch(m *pidtest.Msg) {
	switch {
	case m.IsRequest():
		var result any
		if m.Method() == "workspace/requestTrust" {
			result = map[string]any{"trusted": false}
		}
		d.Answer(m, result)
	case m.IsNotification():
		d.mu.Lock()
		f := d.onNote
		d.mu.Unlock()
		if f != nil {
			f(m.Method())
		}
	}
}

// pid returns the daemon's process id.
func (d *daemon) pid() int { return d.Pid() }

// newSession opens a session in cwd where every tool is allowed (no approval asked).
func (d *daemon) newSession(cwd string) (string, error) {
	res, err := d.request("session/new", map[string]any{"cwd": cwd, "permissions": map[string]any{"default": "allow"}}, nil)
	if err != nil {
		return "", err
	}
	id := res.Get("sessionId").String()
	if id == "" {
		return "", fmt.Errorf("session/new gave no sessionId: %s", res.Raw)
	}
	return id, nil
}

// toolResult is what one tool call gave back.
type toolResult struct {
	details gjson.Result
	text    string
	started time.Time     // when tools/execute was sent
	elapsed time.Duration // from then to its response
	updates []time.Time   // when each $/toolUpdate of the call arrived
}

// execute runs one call of tool with args in session sid and returns its result; a result
// marked isError is an error holding its text.
func (d *daemon) execute(sid, tool string, args map[string]any) (toolResult, error) {
	var tr toolResult
	start := time.Now()
	tr.started = start
	res, err := d.request("tools/execute", map[string]any{"sessionId": sid, "toolCalls": []any{
		map[string]any{"id": "c1", "name": tool, "arguments": args},
	}}, func(method string) {
		if method == "$/toolUpdate" {
			tr.updates = append(tr.updates, time.Now())
		}
	})
	tr.elapsed = time.Since(start)
	if err != nil {
		return tr, err
	}
	msg := res.Get("messages.0")
	tr.details = msg.Get("details")
	tr.text = msg.Get("content.0.text").String()
	if msg.Get("isError").Bool() {
		return tr, fmt.Errorf("%s failed: %s", tool, tr.text)
	}
	return tr, nil
}

// request sends method with params and waits for its response, passing each notification's
// method to onNote meanwhile. It returns the response's result.
func (d *daemon) request(method string, params any, onNote func(string)) (gjson.Result, error) {
	d.mu.Lock()
	d.onNote = onNote
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.onNote = nil
		d.mu.Unlock()
	}()
	return d.Call(method, params)
}

// stop shuts the daemon down and waits for it to exit.
func (d *daemon) stop() { d.Stop(10 * time.Second) }
