// This file implements the LSP-framed object stream under sourcegraph/jsonrpc2: it reads
// `Content-Length` frames, answers a frame that is not a JSON-RPC message with an error
// response (-32700 for bad JSON, -32600 for JSON that is no request or response) and keeps
// reading, where jsonrpc2's own codec would close the connection.

package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tidwall/gjson"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxFrame bounds one message; a larger Content-Length is answered with -32700 and skipped.
const maxFrame = 64 << 20

// frameStream is a jsonrpc2.ObjectStream over LSP framing.
type frameStream struct {
	r      *bufio.Reader
	closer io.Closer

	// wmu serializes writes: jsonrpc2's and the stream's own error answers.
	wmu sync.Mutex
	w   *bufio.Writer
	buf bytes.Buffer // scratch for one frame's header and body

	// intercept, if set, is offered every response before jsonrpc2 sees it; it reports
	// whether it took it (pid's own requests to the editor are answered through it).
	intercept func(id json.RawMessage, body []byte) bool

	// Reader state, used by ReadObject's goroutine only.
	resync  bool   // skip to the next Content-Length header before reading a frame
	pending string // a header line to read before the input's next line
}

func newFrameStream(r io.Reader, w io.Writer, closer io.Closer) *frameStream {
	return &frameStream{r: bufio.NewReaderSize(r, 64<<10), w: bufio.NewWriterSize(w, 64<<10), closer: closer}
}

// WriteObject writes one framed message and flushes it.
func (s *frameStream) WriteObject(obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(body)
}

func (s *frameStream) writeFrame(body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.buf.Reset()
	s.buf.WriteString("Content-Length: ")
	s.buf.WriteString(strconv.Itoa(len(body)))
	s.buf.WriteString("\r\n\r\n")
	s.buf.Write(body)
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	return s.w.Flush()
}

// errorReply writes an error response that is not tied to a handler.
func (s *frameStream) errorReply(id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{Code: code, Message: msg}})
	_ = s.writeFrame(body)
}

type wireError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// ReadObject reads frames until one holds a JSON-RPC message, which it decodes into v.
// Frames that are not are answered and skipped. It fails only when the input ends or
// breaks (then the connection closes).
func (s *frameStream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		var fe *frameError
		if errors.As(err, &fe) {
			s.errorReply(nil, codeParseError, fe.msg)
			continue
		}
		if err != nil {
			return err
		}
		id, response, problem, code := classify(body)
		if problem != "" {
			s.errorReply(id, code, problem)
			continue
		}
		if response && s.intercept != nil && s.intercept(id, body) {
			continue
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.errorReply(id, codeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		return nil
	}
}

// frameError is a frame that could be skipped but not read.
type frameError struct{ msg string }

func (e *frameError) Error() string { return e.msg }

// readFrame reads one frame's body. Header lines end in \r\n (a bare \n is accepted);
// headers other than Content-Length are ignored.
//
// A header block without a usable Content-Length is answered with -32700, and since the
// length of what follows it is unknown, the input is then skipped up to the next
// Content-Length header (resync), so that the next well-formed frame is read as it was sent.
// A line that is not a header where a frame should start is data outside a frame: it is
// answered with -32700 too, and when it runs into a header (a body written without a header,
// followed by the next frame) the header is read from there.
func (s *frameStream) readFrame() ([]byte, error) {
	if s.resync {
		s.resync = false
		if err := s.skipToHeader(); err != nil {
			return nil, err
		}
	}
	length := -1
	sawHeader := false
	var bad string
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && (line != "" || sawHeader) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isHeaderName(strings.TrimSpace(name)) {
			if i := indexContentLength(line); i > 0 {
				// Junk ran into the next frame's header: report the junk, read the frame.
				s.pending = line[i:]
				return nil, &frameError{fmt.Sprintf("parse error: data outside a frame (no Content-Length header): %q", truncate(line[:i], 80))}
			}
			if !sawHeader {
				// Where a frame should start: data outside a frame, reported line by line.
				return nil, &frameError{fmt.Sprintf("parse error: data outside a frame (no Content-Length header): %q", truncate(line, 80))}
			}
			bad = fmt.Sprintf("parse error: malformed header line %q", truncate(line, 80))
			continue
		}
		sawHeader = true
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				bad = fmt.Sprintf("parse error: bad Content-Length %q", truncate(strings.TrimSpace(value), 40))
				continue
			}
			length = n
		}
	}
	if length < 0 {
		if bad == "" {
			bad = "parse error: frame without Content-Length header"
		}
		s.resync = true
		return nil, &frameError{bad}
	}
	if length > maxFrame {
		if _, err := s.r.Discard(length); err != nil {
			return nil, err
		}
		return nil, &frameError{fmt.Sprintf("parse error: message of %d bytes exceeds the %d byte limit", length, maxFrame)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	if bad != "" {
		return nil, &frameError{bad}
	}
	return body, nil
}

// readLine returns the next header line without its line end: a line put back by readFrame,
// else one read from the input.
func (s *frameStream) readLine() (string, error) {
	if s.pending != "" {
		line := s.pending
		s.pending = ""
		return line, nil
	}
	line, err := s.r.ReadString('\n')
	if err != nil {
		return line, err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

const contentLengthHeader = "content-length:"

// skipToHeader discards input up to the next "Content-Length:" (in any case), which it puts
// back for readFrame.
func (s *frameStream) skipToHeader() error {
	matched := 0
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		switch {
		case b == contentLengthHeader[matched]:
			matched++
		case b == contentLengthHeader[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched == len(contentLengthHeader) {
			rest, err := s.r.ReadString('\n')
			if err != nil && err != io.EOF {
				return err
			}
			s.pending = "Content-Length:" + strings.TrimRight(rest, "\r\n")
			return nil
		}
	}
}

// indexContentLength returns where "Content-Length:" (in any case) starts in line, or -1.
func indexContentLength(line string) int {
	lower := []byte(line)
	for i, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	return bytes.Index(lower, []byte(contentLengthHeader))
}

// isHeaderName reports whether s is an HTTP header field name (a token).
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// classify checks that body is one JSON-RPC request, notification or response, and returns
// its id (when it has a usable one) with a problem and the code to answer it with.
// It also reports whether the message is a response.
func classify(body []byte) (id json.RawMessage, response bool, problem string, code int64) {
	if !gjson.ValidBytes(body) {
		return nil, false, "parse error: the message is not valid JSON", codeParseError
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) > 0 && trimmed[0] == '[' {
			return nil, false, "invalid request: batch messages are not supported", codeInvalidRequest
		}
		return nil, false, "invalid request: a message must be a JSON object", codeInvalidRequest
	}
	f := gjson.GetManyBytes(trimmed, "jsonrpc", "id", "method", "result", "error", "params")
	jsonrpc, rid, method, result, rerr, params := f[0], f[1], f[2], f[3], f[4], f[5]
	switch rid.Type {
	case gjson.String:
		id = json.RawMessage(rid.Raw)
	case gjson.Number:
		if n, err := strconv.ParseInt(rid.Raw, 10, 64); err != nil || n < 0 {
			return nil, false, "invalid request: id must be a string or a non-negative integer", codeInvalidRequest
		}
		id = json.RawMessage(rid.Raw)
	case gjson.Null:
		if rid.Exists() && method.Exists() {
			// jsonrpc2 would take it for a notification and the client would wait forever.
			return nil, false, "invalid request: a request id must be a string or an integer, not null", codeInvalidRequest
		}
	default:
		return nil, false, "invalid request: id must be a string or a non-negative integer", codeInvalidRequest
	}
	if jsonrpc.Type != gjson.String || jsonrpc.Str != "2.0" {
		return id, false, `invalid request: "jsonrpc" must be "2.0"`, codeInvalidRequest
	}
	isReq := method.Exists()
	isResp := result.Exists() || rerr.Exists()
	switch {
	case isReq && isResp, !isReq && !isResp:
		return id, false, "invalid request: a message needs either a method or a result/error", codeInvalidRequest
	case isReq && method.Type != gjson.String:
		return id, false, "invalid request: method must be a string", codeInvalidRequest
	case isReq && params.Exists() && !params.IsObject() && !params.IsArray() && params.Type != gjson.Null:
		return id, false, "invalid request: params must be an object or an array", codeInvalidRequest
	}
	return id, isResp, "", 0
}

func (s *frameStream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}
