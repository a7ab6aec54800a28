// Command lspserver is a small language server for pid's tests, speaking LSP over stdio: it
// reports an error (severity 1, source "pidtestlsp") on each line of an open document that
// contains BROKEN, and a warning (severity 2) on each line that contains WARN, with
// textDocument/publishDiagnostics after each didOpen and didChange (or, when started with
// PIDTESTLSP_PULL=1, only through textDocument/diagnostic). A document that contains CRASH
// makes it write a line on stderr and exit with status 3, for the tests of restarts; one that
// contains GARBAGE makes it write, before its diagnostics, a line outside any frame, a frame
// that is not JSON and one that is no JSON-RPC message, for the tests of a client that
// answers or skips a bad frame and reads on. Started with PIDTESTLSP_ASK=1, it asks its
// client workspace/configuration (two items) and an unknown method once initialized, and
// reports each answer as it came as a diagnostic (severity 3, message "answer ID: RAW") on
// the first line of every document.
//
// Build: go build -o lspserver ./testdata/lspserver
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var (
	out  = bufio.NewWriter(os.Stdout)
	pull = os.Getenv("PIDTESTLSP_PULL") == "1"
	ask  = os.Getenv("PIDTESTLSP_ASK") == "1"
	docs = map[string]string{}
	// answers are the client's answers to the server's requests (PIDTESTLSP_ASK), in order.
	answers []string
	in      = bufio.NewReader(os.Stdin)
)

func main() {
	fmt.Fprintln(os.Stderr, "pidtestlsp: started")
	for {
		m, err := read(in)
		if err != nil {
			os.Exit(1)
		}
		handle(m)
	}
}

func handle(m *msg) {
	if m.Method == "" && (m.Result != nil || m.Error != nil) {
		if string(m.ID) != "null" {
			raw := m.Result
			if m.Error != nil {
				raw = m.Error
			}
			answers = append(answers, "answer "+string(m.ID)+": "+string(raw))
		}
		return
	}
	switch m.Method {
	case "initialized":
		if ask {
			write(map[string]any{"jsonrpc": "2.0", "id": "cfg", "method": "workspace/configuration", "params": map[string]any{"items": []any{map[string]any{"section": "a"}, map[string]any{"section": "b"}}}})
			write(map[string]any{"jsonrpc": "2.0", "id": "odd", "method": "pidtest/unknown", "params": map[string]any{}})
			// Wait for both answers, keeping what else comes meanwhile for after them, so
			// that the first document's diagnostics already carry them.
			var later []*msg
			for len(answers) < 2 {
				m, err := read(in)
				if err != nil {
					os.Exit(1)
				}
				if m.Method == "" {
					handle(m)
				} else {
					later = append(later, m)
				}
			}
			for _, m := range later {
				handle(m)
			}
		}
	case "initialize":
		caps := map[string]any{"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": true}}
		if pull {
			caps["diagnosticProvider"] = map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}
		}
		reply(m.ID, map[string]any{"capabilities": caps, "serverInfo": map[string]any{"name": "pidtestlsp"}})
	case "shutdown":
		reply(m.ID, nil)
	case "exit":
		os.Exit(0)
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
				Text    string `json:"text"`
			} `json:"textDocument"`
		}
		_ = json.Unmarshal(m.Params, &p)
		changed(p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text)
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Text string `json:"text"`
			} `json:"contentChanges"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if n := len(p.ContentChanges); n > 0 {
			changed(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges[n-1].Text)
		}
	case "textDocument/diagnostic":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		_ = json.Unmarshal(m.Params, &p)
		reply(m.ID, map[string]any{"kind": "full", "items": diagnose(docs[p.TextDocument.URI])})
	default:
		if len(m.ID) > 0 {
			write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "unknown method " + m.Method}})
		}
	}
}

func changed(uri string, version int, text string) {
	if strings.Contains(text, "CRASH") {
		fmt.Fprintln(os.Stderr, "pidtestlsp: crashing as asked")
		os.Exit(3)
	}
	if strings.Contains(text, "GARBAGE") {
		fmt.Fprintf(out, "this is not a frame\r\n")
		fmt.Fprintf(out, "Content-Length: 9\r\n\r\n{not json")
		fmt.Fprintf(out, "Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}")
		out.Flush()
	}
	docs[uri] = text
	if pull {
		return
	}
	write(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": map[string]any{"uri": uri, "version": version, "diagnostics": diagnose(text)}})
}

func diagnose(text string) []map[string]any {
	ds := []map[string]any{}
	for _, a := range answers {
		ds = append(ds, map[string]any{
			"range":    map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 1}},
			"severity": 3, "message": a, "source": "pidtestlsp",
		})
	}
	for i, line := range strings.Split(text, "\n") {
		for _, w := range []struct {
			word     string
			severity int
			message  string
		}{{"BROKEN", 1, "BROKEN is not allowed here"}, {"WARN", 2, "WARN is discouraged"}} {
			if c := strings.Index(line, w.word); c >= 0 {
				ds = append(ds, map[string]any{
					"range":    map[string]any{"start": map[string]any{"line": i, "character": c}, "end": map[string]any{"line": i, "character": c + len(w.word)}},
					"severity": w.severity, "message": w.message, "source": "pidtestlsp", "code": "T" + strconv.Itoa(w.severity),
				})
			}
		}
	}
	return ds
}

func reply(id json.RawMessage, result any) {
	write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func write(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	out.Flush()
}

func read(in *bufio.Reader) (*msg, error) {
	n := -1
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(in, body); err != nil {
		return nil, err
	}
	var m msg
	return &m, json.Unmarshal(body, &m)
}
