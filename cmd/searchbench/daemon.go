// This file is searchbench's client of one pid daemon: it starts bin/pid in folders of its
// own, speaks JSON-RPC over the daemon's real stdin and stdout, and runs tool calls through
// tools/execute.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// daemon is one running pid process and the client side of its pipes. It is used from one
// goroutine.
type daemon struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	w      *bufio.Writer
	r      *bufio.Reader
	nextID int
}

// startDaemon starts bin with its own HOME and XDG folders under home (so no settings or
// session files of the person running the benchmark are read or written) and initializes
// it. The caller stops it with stop.
func startDaemon(bin, home string) (*daemon, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w (run `make build` first)", bin, err)
	}
	d := &daemon{cmd: cmd, in: in, w: bufio.NewWriter(in), r: bufio.NewReaderSize(out, 1<<16), nextID: 1}
	if _, err := d.request("initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// pid returns the daemon's process id.
func (d *daemon) pid() int { return d.cmd.Process.Pid }

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

// request sends method with params and reads until its response, answering the daemon's
// own requests on the way (trust questions with "not trusted", anything else with null) and
// passing each notification's method to onNote. It returns the response's result.
func (d *daemon) request(method string, params any, onNote func(string)) (gjson.Result, error) {
	id := d.nextID
	d.nextID++
	if err := d.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return gjson.Result{}, err
	}
	for {
		b, err := d.read()
		if err != nil {
			return gjson.Result{}, fmt.Errorf("reading pid's answer to %s: %w", method, err)
		}
		msg := gjson.ParseBytes(b)
		m, mid := msg.Get("method"), msg.Get("id")
		switch {
		case m.Exists() && mid.Exists():
			var result any
			if m.String() == "workspace/requestTrust" {
				result = map[string]any{"trusted": false}
			}
			if err := d.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(mid.Raw), "result": result}); err != nil {
				return gjson.Result{}, err
			}
		case m.Exists():
			if onNote != nil {
				onNote(m.String())
			}
		case mid.Int() == int64(id):
			if e := msg.Get("error"); e.Exists() {
				return gjson.Result{}, fmt.Errorf("%s: error response %s", method, e.Raw)
			}
			return msg.Get("result"), nil
		}
	}
}

func (d *daemon) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "Content-Length: %d\r\n\r\n", len(body))
	d.w.Write(body)
	return d.w.Flush()
}

// read returns the body of the next framed message.
func (d *daemon) read() ([]byte, error) {
	n := -1
	for {
		line, err := d.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("bad header %q", line)
			}
		}
	}
	if n < 0 {
		return nil, errors.New("a frame without Content-Length")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(d.r, b)
	return b, err
}

// stop shuts the daemon down and waits for it to exit.
func (d *daemon) stop() {
	_, _ = d.request("shutdown", nil, nil)
	_ = d.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	d.in.Close()
	done := make(chan struct{})
	go func() {
		d.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-done
	}
}
