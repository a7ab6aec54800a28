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
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/internal/pidtest"
)

func main() {
	bin := flag.String("pid", "bin/pid", "path of the pid binary")
	flag.Parse()
	if err := run(*bin); err != nil {
		fmt.Fprintln(os.Stderr, "piddemo:", err)
		os.Exit(1)
	}
}

// client is a minimal editor over internal/pidtest: LSP framing over the child's stdin and
// stdout, nothing kept, every message pid sends shown (and approvals answered) while a prompt
// runs.
type client struct {
	*pidtest.Process
	start   time.Time
	showing atomic.Bool // whether messages are shown: during the prompt
	ends    int         // toolEnd notifications seen; only the read goroutine touches it
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// onMessage shows one message of pid's, on the Conn's read goroutine, in the order pid
// wrote them.
func (c *client) onMessage(raw *pidtest.Msg) {
	if !c.showing.Load() {
		return
	}
	var m message
	if err := json.Unmarshal(raw.Raw, &m); err != nil {
		fmt.Fprintln(os.Stderr, "piddemo:", err)
		return
	}
	if err := c.show(&m, &c.ends); err != nil {
		fmt.Fprintln(os.Stderr, "piddemo:", err)
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
	c := &client{start: time.Now()}
	p, err := pidtest.Start(bin, pidtest.Options{Stderr: os.Stderr, Conn: pidtest.ConnOptions{Discard: true, OnMessage: c.onMessage}})
	if err != nil {
		return fmt.Errorf("%w (run `make build` first)", err)
	}
	c.Process = p
	defer p.Kill() // when something failed on the way; after Wait it does nothing
	fmt.Printf("Started %s (process %d); talking JSON-RPC with LSP framing over its stdin/stdout.\n\n", bin, p.Pid())

	r, err := c.Call("initialize", map[string]any{
		"processId": os.Getpid(), "clientInfo": map[string]any{"name": "piddemo"},
		"capabilities": map[string]any{"experimental": map[string]any{"pid": map[string]any{"beforeToolCall": true}}},
	})
	if err != nil {
		return err
	}
	var init struct {
		ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	}
	json.Unmarshal([]byte(r.Raw), &init)
	fmt.Printf("%s initialize -> %s %s\n", c.stamp(), init.ServerInfo.Name, init.ServerInfo.Version)
	c.Notify("initialized", map[string]any{})

	if r, err = c.Call("session/new", sessionParams()); err != nil {
		return err
	}
	var sess struct {
		SessionID string `json:"sessionId"`
		Tools     []struct{ Name string }
	}
	json.Unmarshal([]byte(r.Raw), &sess)
	var names []string
	for _, t := range sess.Tools {
		names = append(names, t.Name)
	}
	fmt.Printf("%s session/new -> %s, tools: %s\n", c.stamp(), sess.SessionID, strings.Join(names, ", "))

	prompt := "calc_test.go fails: Add(2, 2) returns 0. Fix it."
	fmt.Printf("%s session/prompt %q\n\n", c.stamp(), prompt)
	c.showing.Store(true)
	r, err = c.Call("session/prompt", map[string]any{"sessionId": sess.SessionID, "text": prompt})
	c.showing.Store(false)
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
	if err := json.Unmarshal([]byte(r.Raw), &res); err != nil {
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

	code, err := c.Stop(10 * time.Second)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("pid exited: exit status %d", code)
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
		return c.SendJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"decision": decision, "reason": reasonFor(decision)}})
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
