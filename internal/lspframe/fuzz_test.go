package lspframe

// The fuzz targets of the frame reader (make fuzz runs them; their seeds, here and in
// testdata/fuzz/, run with every go test): whatever bytes an editor or a language server
// sends, the reader never panics or hangs, each frame is either dispatched or answered with an
// error at once, and reading resumes on the next good frame.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/pidtest"
	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/internal/rpcwire"
)

// sentinelFrame is a good frame with a request whose id is name.
func sentinelFrame(name string) string {
	body := `{"jsonrpc":"2.0","id":"` + name + `","method":"sentinel"}`
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// readerRun is what reading an input to its end gave: the messages dispatched, in order, and
// how reading ended.
type readerRun struct {
	dispatched []*rpcconn.Message
	answers    int
	end        error
}

// runReader reads input with a frameStream until it ends, checking every step: each call of
// readMessage dispatches one well-formed message and writes nothing, or writes exactly one
// error answer (-32700 or -32600, id null or a valid id) and dispatches nothing, or ends
// (having answered a frame that ends the connection).
func runReader(t *testing.T, input []byte) readerRun {
	t.Helper()
	var out bytes.Buffer
	s := NewStream(bytes.NewReader(input))
	var run readerRun
	for calls := 0; ; calls++ {
		if calls > len(input)+2 {
			t.Fatalf("no progress: %d reads of a %d byte input", calls, len(input))
		}
		before := out.Len()
		m, err := readMessage(s, &out)
		answers := checkAnswers(t, out.Bytes()[before:])
		run.answers += answers
		var fe *rpcconn.Reject
		switch {
		case errors.As(err, &fe):
			if !fe.Fatal || answers != 1 {
				t.Fatalf("a reading-ending frame error (fatal %v) with %d answers: %v", fe.Fatal, answers, fe)
			}
			run.end = err
			return run
		case err != nil:
			if answers != 0 {
				t.Fatalf("the input ended (%v) with %d answers written", err, answers)
			}
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("reading a byte slice failed with %v", err)
			}
			run.end = err
			return run
		case m == nil:
			if answers != 1 {
				t.Fatalf("a frame was neither dispatched nor answered once (%d answers)", answers)
			}
		default:
			if answers != 0 {
				t.Fatalf("a dispatched frame was answered too")
			}
			checkIncoming(t, m)
			run.dispatched = append(run.dispatched, m)
		}
	}
}

// readMessage reads the next message with s as the connection does: a rejected frame is
// answered on out (and nil returned), unless it ends the reading (its Reject is returned).
func readMessage(s *Stream, out *bytes.Buffer) (*rpcconn.Message, error) {
	m, err := s.Read()
	var rej *rpcconn.Reject
	if errors.As(err, &rej) {
		out.Write(s.Frame(nil, rpcconn.ErrorBody(rej.ID, rej.Err, json.Marshal)))
		if rej.Fatal {
			return nil, err
		}
		return nil, nil
	}
	return m, err
}

// checkAnswers checks the frames in out, which must all be error answers, and counts them.
func checkAnswers(t *testing.T, out []byte) int {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(out))
	n := 0
	for {
		body, err := readStrictFrame(r)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("the reader wrote something that is no frame: %v", err)
		}
		n++
		code := gjson.GetBytes(body, "error.code").Int()
		id := gjson.GetBytes(body, "id")
		if gjson.GetBytes(body, "jsonrpc").String() != "2.0" || (code != jsonrpc2.CodeParseError && code != jsonrpc2.CodeInvalidRequest) ||
			gjson.GetBytes(body, "error.message").String() == "" || !id.Exists() {
			t.Fatalf("not an error answer: %s", body)
		}
		if _, ok := rpcwire.IDKey([]byte(id.Raw)); !ok && id.Raw != "null" {
			t.Fatalf("an answer with the id %s: %s", id.Raw, body)
		}
	}
}

// checkIncoming checks a dispatched message: what the handlers may rely on.
func checkIncoming(t *testing.T, m *rpcconn.Message) {
	t.Helper()
	if m.ID != nil {
		key, ok := rpcwire.IDKey(m.ID)
		if !ok || key != m.Key {
			t.Fatalf("dispatched with the id %s (key %q, valid %v)", m.ID, m.Key, ok)
		}
	}
	if m.Response {
		if m.Result == nil && m.Error == nil || m.Method != "" {
			t.Fatalf("a response without result and error, or with a method: %+v", m)
		}
		return
	}
	if p := m.Params; p != nil && !json.Valid(p) || p != nil && p[0] != '{' && p[0] != '[' && string(p) != "null" {
		t.Fatalf("dispatched with params %q", p)
	}
}

// FuzzFrameReader feeds any bytes to the frame reader, then two good frames. Beyond the
// checks of runReader: when the input holds no Content-Length header (which could announce a
// body that swallows them), the second good frame is dispatched, as the last message.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{
		"",
		sentinelFrame("x"),
		"junk\r\n",
		"}}}garbage{{{\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\r\n",
		"Content-Type: application/json\r\n\r\n{}",
		"Content-Length: +5\r\n\r\n{\"a\":",
		"Content-Length: -0\r\n\r\n",
		"Content-Length: 4611686018427387904\r\n\r\n",
		"Content-Length: 2\r\nthis is no header\r\n\r\n{}",
		"content-length: 2\n\n[]",
		"X-A: b\r\n",
		"a:b",
		"Content-Length: 10\r\n\r\n[[[[[[[[[[",
		strings.Repeat("x", 9000),
		"X-Long: " + strings.Repeat("y", 9000) + "\r\n\r\n",
		"Content-Length: " + strings.Repeat("0", 9000) + "5\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, prefix []byte) {
		input := append(append([]byte(nil), prefix...), sentinelFrame("s1")+sentinelFrame("s2")...)
		run := runReader(t, input)
		if indexFold(prefix, contentLengthHeader) >= 0 {
			return
		}
		if len(run.dispatched) == 0 || string(run.dispatched[len(run.dispatched)-1].ID) != `"s2"` {
			t.Fatalf("reading did not resume on the good frames after the input: dispatched %d messages, ended with %v", len(run.dispatched), run.end)
		}
		if run.end != io.EOF {
			t.Fatalf("reading ended with %v after the last good frame", run.end)
		}
	})
}

// FuzzFrameBody frames any body correctly, then a good frame: the body is dispatched (then it
// is valid JSON, or a response) or answered with one error (with its id when it has a
// readable one), and the good frame is dispatched next.
func FuzzFrameBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"x"}`,
		`{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1e2}}`,
		`{"jsonrpc":"2.0","id":"r","result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`,
		`{"jsonrpc":"1.0","id":"v","method":"x"}`,
		`{"jsonrpc":"2.0","id":2,"method":"x","params":"s"}`,
		`{"jsonrpc":"2.0","id":3,"method":5}`,
		`{"jsonrpc":"2.0","id":4,"method":"x","result":1}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`{"jsonrpc":"2.0","id":"deep","method":"x","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		strings.Repeat("[", 100000),
		`{"\u006a\u0073onrpc":"2.0","\u0069d":5,"method":"x"}`,
		``, `null`, `"s"`, `{"jsonrpc":"2.0","id":1,"method":"x"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		input := fmt.Sprintf("Content-Length: %d\r\n\r\n%s%s", len(body), body, sentinelFrame("next"))
		var out bytes.Buffer
		s := NewStream(strings.NewReader(input))
		m, err := readMessage(s, &out)
		if err != nil {
			t.Fatalf("reading a well-framed body failed: %v", err)
		}
		answers := checkAnswers(t, out.Bytes())
		env, scanErr := rpcwire.Scan(body)
		switch {
		case m == nil && answers != 1, m != nil && answers != 0:
			t.Fatalf("dispatched %v and answered %d times", m != nil, answers)
		case m != nil:
			checkIncoming(t, m)
			if !m.Response && !json.Valid(body) {
				t.Fatalf("a request or notification that is no valid JSON was dispatched: %q", body)
			}
		default:
			answer, _ := readStrictFrame(bufio.NewReader(&out))
			id := gjson.GetBytes(answer, "id").Raw
			code := gjson.GetBytes(answer, "error.code").Int()
			if code == jsonrpc2.CodeParseError && json.Valid(body) {
				t.Fatalf("valid JSON answered -32700: %q", body)
			}
			if id != "null" && (scanErr != nil && !errors.Is(scanErr, rpcwire.ErrTooDeep) || id != string(env.ID)) {
				t.Fatalf("answered with the id %s, which the message does not carry as written: %q", id, body)
			}
		}
		next, err := readMessage(s, &out)
		if err != nil || next == nil || string(next.ID) != `"next"` {
			t.Fatalf("the good frame after it was not dispatched: %v %v", next, err)
		}
	})
}

// readStrictFrame reads one Content-Length frame holding JSON.
func readStrictFrame(br *bufio.Reader) ([]byte, error) {
	body, err := pidtest.ReadFrame(br)
	if err == nil && !json.Valid(body) {
		return nil, fmt.Errorf("a frame that is not JSON: %q", body)
	}
	return body, err
}
