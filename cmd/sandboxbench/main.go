// Command sandboxbench measures what the sandbox adds to a bash call on the real daemon: it
// starts pid, opens two sessions (the default sandbox, and "sandbox": {"mode": "off"}), runs
// `echo hi` through tools/execute in each, alternately, and prints the median and 90th
// percentile of the round trips, and the median difference. docs/performance.md quotes it.
//
//	go build -o bin/pid ./cmd/pid && go run ./cmd/sandboxbench -pid bin/pid -n 200
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	pidPath := flag.String("pid", "bin/pid", "the pid binary")
	n := flag.Int("n", 200, "calls per session")
	command := flag.String("command", "echo hi", "the bash command")
	box := flag.String("sandbox", "", `the sandboxed session's "sandbox" settings (JSON); default: none (the default sandbox)`)
	flag.Parse()
	var sb any
	if *box != "" {
		if err := json.Unmarshal([]byte(*box), &sb); err != nil {
			fmt.Fprintln(os.Stderr, "sandboxbench: -sandbox:", err)
			os.Exit(2)
		}
	}
	if err := run(*pidPath, *n, *command, sb); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

// conn is the editor's side of pid's stdio: LSP framing, one request at a time.
type conn struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

func (c *conn) send(method string, params any) (json.RawMessage, error) {
	c.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		return nil, err
	}
	for {
		msg, err := c.read()
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			return nil, err
		}
		if m.Method != "" || m.ID == nil || *m.ID != c.id {
			continue // a notification
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

func (c *conn) read() ([]byte, error) {
	length := -1
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, length)
	_, err := io.ReadFull(c.r, buf)
	return buf, err
}

func run(pidPath string, n int, command string, box any) error {
	cmd := exec.Command(pidPath)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { in.Close(); cmd.Wait() }()
	c := &conn{w: in, r: bufio.NewReader(out)}
	cwd, _ := os.Getwd()
	init, err := c.send("initialize", map[string]any{"processId": nil, "rootUri": "file://" + cwd, "capabilities": map[string]any{}})
	if err != nil {
		return err
	}
	var caps struct {
		Capabilities struct {
			Experimental struct {
				Pid struct {
					Sandbox json.RawMessage `json:"sandbox"`
				} `json:"pid"`
			} `json:"experimental"`
		} `json:"capabilities"`
	}
	json.Unmarshal(init, &caps)
	fmt.Printf("sandbox capability: %s\n", caps.Capabilities.Experimental.Pid.Sandbox)
	perms := map[string]any{"tools": map[string]any{"bash": "allow"}}
	var ids [2]string
	for i, sb := range []any{box, map[string]any{"mode": "off"}} {
		p := map[string]any{"permissions": perms}
		if sb != nil {
			p["sandbox"] = sb
		}
		res, err := c.send("session/new", p)
		if err != nil {
			return err
		}
		var r struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(res, &r)
		ids[i] = r.SessionID
	}
	var times [2][]time.Duration
	var mode [2]string
	for k := range n + 5 {
		for i, id := range ids {
			began := time.Now()
			res, err := c.send("tools/execute", map[string]any{"sessionId": id, "toolCalls": []any{map[string]any{"id": "c", "name": "bash", "arguments": map[string]any{"command": command}}}})
			took := time.Since(began)
			if err != nil {
				return err
			}
			var r struct {
				Messages []struct {
					IsError bool `json:"isError"`
					Details struct {
						Sandbox struct {
							Mode string `json:"mode"`
						} `json:"sandbox"`
					} `json:"details"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(res, &r); err != nil || len(r.Messages) != 1 || r.Messages[0].IsError {
				return fmt.Errorf("tools/execute: %s", res)
			}
			mode[i] = r.Messages[0].Details.Sandbox.Mode
			if k >= 5 { // the first calls warm up
				times[i] = append(times[i], took)
			}
		}
	}
	med := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1))]
	}
	for i := range ids {
		fmt.Printf("%-16s n=%d  median %6.2f ms  p90 %6.2f ms\n", mode[i], len(times[i]), ms(med(times[i], 0.5)), ms(med(times[i], 0.9)))
	}
	diffs := make([]time.Duration, len(times[0]))
	for k := range diffs {
		diffs[k] = times[0][k] - times[1][k]
	}
	fmt.Printf("added by the sandbox: median of paired differences %.2f ms; difference of medians %.2f ms\n",
		ms(med(diffs, 0.5)), ms(med(times[0], 0.5)-med(times[1], 0.5)))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
