// This file holds the fuzz target of the line reader (make fuzz runs it; its seeds, here and
// in testdata/fuzz/, run with every go test): whatever bytes a client sends, the reader never
// panics or hangs, each line is dispatched, answered with one error at once, or (a malformed
// notification) dropped, and reading resumes on the next line.

package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/internal/rpcwire"
)

const sentinelLine = `{"jsonrpc":"2.0","id":"sentinel","method":"x"}`

// runLines reads data, a newline and a good request with a conn whose reader buffer holds
// bufSize bytes and whose line limit is lineMax, and checks every line's outcome against a
// model of the input's lines.
func runLines(t *testing.T, data []byte, bufSize, lineMax int) {
	t.Helper()
	input := append(append([]byte(nil), data...), "\n"+sentinelLine+"\n"...)
	var out bytes.Buffer
	c := &lines{r: bufio.NewReaderSize(bytes.NewReader(input), bufSize), maxLine: lineMax}
	lines := bytes.SplitAfter(input, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	// Lines that give no outcome: blank ones within the limit.
	var want [][]byte
	for _, l := range lines {
		if len(l) > lineMax || len(bytes.TrimSpace(l)) > 0 {
			want = append(want, l)
		}
	}
	for i := 0; ; i++ {
		before := out.Len()
		msg, err := next(c, &out)
		answers := checkLineAnswers(t, out.Bytes()[before:])
		if err != nil {
			if err != io.EOF || i != len(want) || answers != 0 {
				t.Fatalf("reading ended with %v after %d of %d lines (%d answers)", err, i, len(want), answers)
			}
			return
		}
		if i >= len(want) {
			t.Fatalf("an outcome for no line: %+v", msg)
		}
		line := want[i]
		switch {
		case len(line) > lineMax:
			if msg != nil || answers != 1 || !strings.Contains(out.String()[before:], `"code":-32700`) {
				t.Fatalf("a line of %d bytes (limit %d): dispatched %v, %d answers", len(line), lineMax, msg != nil, answers)
			}
		case msg != nil:
			if answers != 0 {
				t.Fatalf("a dispatched line was answered too: %q", line)
			}
			checkMessage(t, msg)
			if i == len(want)-1 && (msg.Response || msg.ID == nil || string(msg.ID) != `"sentinel"`) {
				t.Fatalf("the good line after the input was not dispatched: %+v", msg)
			}
		case answers == 0:
			// Dropped: only a notification may be, never answered whatever it holds.
			env, err := rpcwire.Scan(bytes.TrimSpace(line))
			if err != nil && err != rpcwire.ErrTooDeep || env.Top != '{' || env.Method == nil || env.ID != nil {
				t.Fatalf("a line that is no notification was dropped: %q", line)
			}
		case answers != 1:
			t.Fatalf("a line answered %d times: %q", answers, line)
		}
	}
}

// next reads the next line with c as the connection does: a rejected line is answered on out
// (or dropped) and nil returned.
func next(c *lines, out *bytes.Buffer) (*rpcconn.Message, error) {
	m, err := c.Read()
	var rej *rpcconn.Reject
	if errors.As(err, &rej) {
		if rej.Err != nil {
			out.Write(c.Frame(nil, rpcconn.ErrorBody(rej.ID, rej.Err, marshal)))
		}
		return nil, nil
	}
	return m, err
}

// checkLineAnswers checks the lines in out, which must all be error answers, and counts them.
func checkLineAnswers(t *testing.T, out []byte) int {
	t.Helper()
	n := 0
	for _, l := range bytes.Split(out, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		n++
		code := gjson.GetBytes(l, "error.code").Int()
		id := gjson.GetBytes(l, "id")
		if !json.Valid(l) || gjson.GetBytes(l, "jsonrpc").String() != "2.0" || (code != codeParseError && code != codeInvalidRequest) || !id.Exists() {
			t.Fatalf("not an error answer: %s", l)
		}
		if !validID(json.RawMessage(id.Raw)) {
			t.Fatalf("an answer with the id %s: %s", id.Raw, l)
		}
	}
	return n
}

// checkMessage checks a dispatched message: what the handlers may rely on.
func checkMessage(t *testing.T, m *rpcconn.Message) {
	t.Helper()
	switch {
	case m.Response:
		if m.ID == nil || m.Result == nil && m.Error == nil || m.Key != idKey(m.ID) {
			t.Fatalf("a response without id, or without result and error: %+v", m)
		}
	case m.ID != nil:
		if !validID(m.ID) || m.Key != idKey(m.ID) {
			t.Fatalf("a request with the id %q (key %q)", m.ID, m.Key)
		}
	}
	for _, raw := range []json.RawMessage{m.Params, m.Result, m.Error} {
		if _, err := rpcwire.Scan(raw); raw != nil && err != nil && err != rpcwire.ErrTooDeep {
			t.Fatalf("a member that is no JSON value: %q", raw)
		}
	}
}

// FuzzLineReader feeds any bytes to the line reader, then a newline and a good request, with
// the daemon's buffer and limit and with tiny ones (so that long lines, skipped lines and
// lines over the limit are reached with small inputs).
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{
		"",
		sentinelLine,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":1.5e3,"method":"x"}` + "\n" + `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
		`{"jsonrpc":"1.0","method":"n"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		"not json\n\n   \r\n42",
		strings.Repeat("[", 20000),
		`{"jsonrpc":"2.0","id":"d","method":"x","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		strings.Repeat("x", 100) + "\n" + strings.Repeat(" ", 60) + "\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runLines(t, data, 64<<10, maxLine)
		runLines(t, data, 16, 60)
	})
}
