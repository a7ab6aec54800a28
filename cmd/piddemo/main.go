// Command piddemo shows pid doing its job with no API key and no network: it starts the pid
// binary as a child process over real pipes, plays an editor through the protocol with a
// scripted model and scripted tools, and prints the live stream as it arrives.
//
//	go run ./cmd/piddemo [-pid bin/pid]
//
// The session: the model asks for four tools at once. Two read-only ones run in parallel
// and report progress; one writes a file and needs approval (the demo allows it); one runs
// a shell command and is denied. Their ends arrive in completion order; the results the
// model gets back are in the order it wrote the calls. Then the model answers.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("pid", "bin/pid", "path of the pid binary")
	flag.Parse()
	if err := run(*bin); err != nil {
		fmt.Fprintln(os.Stderr, "piddemo:", err)
		os.Exit(1)
	}
}

// client is a minimal editor: LSP framing over the child's stdin and stdout.
type client struct {
	w     io.Writer
	r     *bufio.Reader
	start time.Time
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (c *client) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

func (c *client) request(id int, method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (c *client) read() (*message, error) {
	n := -1
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
			n, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, err
	}
	var m message
	return &m, json.Unmarshal(body, &m)
}

// await reads until the response with id arrives, printing everything before it.
func (c *client) await(id int, show func(*message) error) (*message, error) {
	for {
		m, err := c.read()
		if err != nil {
			return nil, err
		}
		if m.Method == "" && string(m.ID) == strconv.Itoa(id) {
			if m.Error != nil {
				return nil, fmt.Errorf("pid answered error %d: %s", m.Error.Code, m.Error.Message)
			}
			return m, nil
		}
		if err := show(m); err != nil {
			return nil, err
		}
	}
}

func (c *client) stamp() string {
	return fmt.Sprintf("[%7.1f ms]", float64(time.Since(c.start).Microseconds())/1000)
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func toolCall(id, name string, args map[string]any) map[string]any {
	return map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}
}

func content(s string) map[string]any { return map[string]any{"content": []any{text(s)}} }

func sessionParams() map[string]any {
	object := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, name := range props {
			p[name] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p, "required": props}
	}
	return map[string]any{
		"model": map[string]any{"provider": "script", "turns": []any{
			map[string]any{"content": []any{
				map[string]any{"type": "thinking", "thinking": "Look at the failing test and the code, fix it, run the tests."},
				toolCall("call_1", "read_file", map[string]any{"path": "calc.go"}),
				toolCall("call_2", "grep", map[string]any{"pattern": "func Add"}),
				toolCall("call_3", "write_file", map[string]any{"path": "calc.go", "content": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}),
				toolCall("call_4", "bash", map[string]any{"command": "rm -rf build && go test ./..."}),
			}},
			map[string]any{"content": []any{text("I fixed Add in calc.go (it subtracted). I did not run the tests: you denied bash, so run `go test ./...` when you are ready.")}},
		}},
		"scriptedTools": []any{
			map[string]any{"name": "read_file", "parameters": object("path"), "steps": []any{
				map[string]any{"update": content("opened calc.go")},
				map[string]any{"sleepMs": 30},
				map[string]any{"update": content("read 3 lines")},
				map[string]any{"result": content("package calc\n\nfunc Add(a, b int) int { return a - b }")},
			}},
			map[string]any{"name": "grep", "parameters": object("pattern"), "steps": []any{
				map[string]any{"update": content("searching 12 files")},
				map[string]any{"sleepMs": 5},
				map[string]any{"result": content("calc.go:3:func Add(a, b int) int { return a - b }")},
			}},
			map[string]any{"name": "write_file", "requiresApproval": true, "parameters": object("path", "content"), "steps": []any{
				map[string]any{"sleepMs": 10},
				map[string]any{"result": content("wrote 52 bytes to calc.go")},
			}},
			map[string]any{"name": "bash", "requiresApproval": true, "parameters": object("command"), "steps": []any{
				map[string]any{"result": content("ok")},
			}},
		},
	}
}

func run(bin string) error {
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w (run `make build` first)", bin, err)
	}
	c := &client{w: stdin, r: bufio.NewReader(stdout), start: time.Now()}
	fmt.Printf("Started %s (process %d); talking JSON-RPC with LSP framing over its stdin/stdout.\n\n", bin, cmd.Process.Pid)

	if err := c.request(1, "initialize", map[string]any{
		"processId": os.Getpid(), "clientInfo": map[string]any{"name": "piddemo"},
		"capabilities": map[string]any{"experimental": map[string]any{"pid": map[string]any{"beforeToolCall": true}}},
	}); err != nil {
		return err
	}
	m, err := c.await(1, func(*message) error { return nil })
	if err != nil {
		return err
	}
	var init struct {
		ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	}
	json.Unmarshal(m.Result, &init)
	fmt.Printf("%s initialize -> %s %s\n", c.stamp(), init.ServerInfo.Name, init.ServerInfo.Version)
	c.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})

	if err := c.request(2, "session/new", sessionParams()); err != nil {
		return err
	}
	if m, err = c.await(2, func(*message) error { return nil }); err != nil {
		return err
	}
	var sess struct {
		SessionID string `json:"sessionId"`
		Tools     []struct{ Name string }
	}
	json.Unmarshal(m.Result, &sess)
	var names []string
	for _, t := range sess.Tools {
		names = append(names, t.Name)
	}
	fmt.Printf("%s session/new -> %s, tools: %s\n", c.stamp(), sess.SessionID, strings.Join(names, ", "))

	prompt := "calc_test.go fails: Add(2, 2) returns 0. Fix it."
	fmt.Printf("%s session/prompt %q\n\n", c.stamp(), prompt)
	if err := c.request(3, "session/prompt", map[string]any{"sessionId": sess.SessionID, "text": prompt}); err != nil {
		return err
	}
	ends := 0
	m, err = c.await(3, func(m *message) error { return c.show(m, &ends) })
	if err != nil {
		return err
	}
	var res struct {
		StopReason string `json:"stopReason"`
		Messages   []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"toolCallId"`
			ToolName   string `json:"toolName"`
			IsError    bool   `json:"isError"`
			Content    []struct{ Type, Text string }
		} `json:"messages"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return err
	}
	fmt.Printf("\n%s session/prompt answered: stopReason %q, %d new messages.\n", c.stamp(), res.StopReason, len(res.Messages))
	fmt.Println("\nTool results as the model receives them (source order, whatever the completion order was):")
	i := 0
	for _, msg := range res.Messages {
		if msg.Role != "toolResult" {
			continue
		}
		i++
		status := "ok   "
		if msg.IsError {
			status = "error"
		}
		fmt.Printf("  %d. %-10s %s  %s\n", i, msg.ToolName, status, firstLine(msg.Content))
	}
	last := res.Messages[len(res.Messages)-1]
	fmt.Printf("\nFinal answer: %s\n\n", firstLine(last.Content))

	if err := c.request(4, "shutdown", nil); err != nil {
		return err
	}
	if _, err := c.await(4, func(*message) error { return nil }); err != nil {
		return err
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pid exited: %w", err)
	}
	fmt.Printf("%s shutdown, exit: pid exited with code 0.\n", c.stamp())
	return nil
}

func firstLine(blocks []struct{ Type, Text string }) string {
	for _, b := range blocks {
		if b.Type == "text" {
			s, _, _ := strings.Cut(b.Text, "\n")
			return s
		}
	}
	return ""
}

// show prints one message from pid and answers approval requests: the write is allowed,
// the shell command denied.
func (c *client) show(m *message, ends *int) error {
	var p struct {
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Args       json.RawMessage `json:"args"`
		IsError    bool            `json:"isError"`
		Partial    struct {
			Content []struct{ Type, Text string }
		} `json:"partialResult"`
		Result struct {
			Content []struct{ Type, Text string }
		} `json:"result"`
		Message struct {
			Role       string `json:"role"`
			StopReason string `json:"stopReason"`
			ToolCallID string `json:"toolCallId"`
			Content    []struct {
				Type, Text, Thinking string
			}
		} `json:"message"`
		Delta struct {
			Type string `json:"type"`
		} `json:"delta"`
	}
	json.Unmarshal(m.Params, &p)
	ts := c.stamp()
	call := p.ToolName + "#" + strings.TrimPrefix(p.ToolCallID, "call_")
	switch m.Method {
	case "turnStart":
		fmt.Printf("%s --- turn ---\n", ts)
	case "messageEnd":
		switch p.Message.Role {
		case "assistant":
			for _, b := range p.Message.Content {
				switch b.Type {
				case "thinking":
					fmt.Printf("%s model thinks: %s\n", ts, b.Thinking)
				case "text":
					fmt.Printf("%s model says: %s\n", ts, b.Text)
				}
			}
			fmt.Printf("%s model message ends (%s)\n", ts, p.Message.StopReason)
		case "toolResult":
			fmt.Printf("%s   result message for %s (source order)\n", ts, p.Message.ToolCallID)
		}
	case "toolStart":
		fmt.Printf("%s > %-14s started   %s\n", ts, call, p.Args)
	case "$/toolUpdate":
		fmt.Printf("%s ~ %-14s progress  %s\n", ts, call, firstLine(p.Partial.Content))
	case "toolEnd":
		*ends++
		status := "ok"
		if p.IsError {
			status = "ERROR"
		}
		fmt.Printf("%s < %-14s ended #%d  %s: %s\n", ts, call, *ends, status, firstLine(p.Result.Content))
	case "beforeToolCall":
		decision := "allow"
		if p.ToolName == "bash" {
			decision = "deny"
		}
		fmt.Printf("%s ? %-14s approval asked -> the demo answers %q\n", ts, call, decision)
		return c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"decision": decision, "reason": reasonFor(decision)}})
	case "window/logMessage":
		var l struct{ Message string }
		json.Unmarshal(m.Params, &l)
		fmt.Printf("%s log: %s\n", ts, l.Message)
	}
	return nil
}

func reasonFor(decision string) string {
	if decision == "deny" {
		return "The user denied bash: do not delete the build folder."
	}
	return ""
}
