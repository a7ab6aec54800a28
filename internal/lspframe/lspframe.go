// Package lspframe is JSON-RPC 2.0 with LSP framing (`Content-Length` headers) as an
// rpcconn.Codec, for every connection pid makes in that framing: the native face (package rpc,
// pid's stdin and stdout) and the language servers pid starts (package lsp). The entry point
// is NewStream: its Stream reads frames and checks the JSON-RPC message each holds, rejecting
// every frame that holds none (-32700 for what is not JSON or not framed, -32600 for JSON that
// is no request, notification or response; the connection answers them and reads on), and
// frames what pid writes. The texts of those answers are the native face's (docs/protocol.md,
// its fixtures pin them).
package lspframe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/internal/rpcwire"
)

// MaxFrame bounds one message. A larger Content-Length is answered with -32700 and closes the
// connection: the frame cannot be skipped without reading it.
const MaxFrame = 64 << 20

// maxHeaderLine bounds one header line, line end included. A longer line is answered with
// -32700 and the input is skipped up to the next Content-Length header.
const maxHeaderLine = 8 << 10

// maxLengthDigits bounds the digits of a Content-Length value that are read; more digits
// (leading zeros included) count as a length over MaxFrame.
const maxLengthDigits = 19

// Stream is an rpcconn.Codec: it reads LSP-framed messages and frames the ones pid writes.
type Stream struct {
	// Reader state, used by the read loop's goroutine only.
	r      *bufio.Reader
	resync bool // skip to the next Content-Length header before reading a frame
}

// NewStream returns a Stream that reads r.
func NewStream(r io.Reader) *Stream {
	return &Stream{r: bufio.NewReaderSize(r, 64<<10)}
}

// Frame implements rpcconn.Codec: a Content-Length header, then body.
func (s *Stream) Frame(dst, body []byte) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// Read implements rpcconn.Codec: it reads the next frame and returns the message it holds. A
// frame that holds none is an *rpcconn.Reject, answered by the connection, which then reads
// on; a frame over MaxFrame is a fatal one (the input cannot be read on). Other errors mean
// the input ended or broke.
func (s *Stream) Read() (*rpcconn.Message, error) {
	body, err := s.readFrame()
	var fe *frameError
	if errors.As(err, &fe) {
		return nil, &rpcconn.Reject{Err: &jsonrpc2.Error{Code: jsonrpc2.CodeParseError, Message: fe.msg}, Fatal: fe.fatal}
	}
	if err != nil {
		return nil, err
	}
	m, p := parseMessage(body)
	if p != nil {
		return nil, &rpcconn.Reject{ID: p.id, Err: &jsonrpc2.Error{Code: p.code, Message: p.msg}}
	}
	return m, nil
}

// frameError is a frame that could not be read. fatal means the input cannot be read on.
type frameError struct {
	msg   string
	fatal bool
}

func (e *frameError) Error() string { return e.msg }

// errLineTooLong is a header line over maxHeaderLine.
var errLineTooLong = errors.New("header line too long")

// readFrame reads one frame's body. Header lines end in \r\n (a bare \n is accepted) and are
// at most maxHeaderLine bytes; headers other than Content-Length are ignored, and a
// Content-Length is decimal digits only.
//
// A header block without a usable Content-Length, or with an overlong line, is answered with
// -32700, and since the length of what follows it is unknown, the input is then skipped up to
// the next Content-Length header (resync), so that the next well-formed frame is read as it
// was sent. A line that is not a header where a frame should start is data outside a frame:
// it is answered with -32700 too, and when it runs into a header (a body written without a
// header, followed by the next frame) the header is read from there. A Content-Length over
// MaxFrame is answered at once and ends the reading (a fatal frameError): a frame that size is
// not read, and without reading it the next one cannot be found.
func (s *Stream) readFrame() ([]byte, error) {
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
		line, err := s.peekLine()
		if err == errLineTooLong {
			// Drop the line's start, keeping the bytes where the next frame's header may
			// begin (junk running into it), and find that header from there.
			s.r.Discard(maxHeaderLine - 64)
			s.resync = true
			if !sawHeader {
				return nil, &frameError{msg: fmt.Sprintf("parse error: data outside a frame: a line longer than %d bytes where a Content-Length header should start", maxHeaderLine)}
			}
			return nil, &frameError{msg: fmt.Sprintf("parse error: a header line longer than %d bytes; the frame is skipped", maxHeaderLine)}
		}
		if err != nil {
			if err == io.EOF && (len(line) > 0 || sawHeader) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		text := bytes.TrimRight(line, "\r\n")
		if len(text) == 0 {
			s.r.Discard(len(line))
			if !sawHeader {
				continue // a stray blank line between frames
			}
			break
		}
		name, value, ok := bytes.Cut(text, []byte(":"))
		name = bytes.TrimSpace(name)
		if !ok || !isHeaderName(name) {
			if i := indexFold(text, contentLengthHeader); i > 0 {
				// Junk ran into the next frame's header: report the junk, read the frame.
				fe := &frameError{msg: fmt.Sprintf("parse error: data outside a frame (no Content-Length header): %q", truncate(string(text[:i]), 80))}
				s.r.Discard(i)
				return nil, fe
			}
			quoted := truncate(string(text), 80)
			s.r.Discard(len(line))
			if !sawHeader {
				// Where a frame should start: data outside a frame, reported line by line.
				return nil, &frameError{msg: fmt.Sprintf("parse error: data outside a frame (no Content-Length header): %q", quoted)}
			}
			bad = fmt.Sprintf("parse error: malformed header line %q", quoted)
			continue
		}
		sawHeader = true
		if bytes.EqualFold(name, []byte("Content-Length")) {
			value = bytes.TrimSpace(value)
			n, ok := parseLength(value)
			switch {
			case !ok:
				bad = fmt.Sprintf("parse error: bad Content-Length %q: it must be the body's size in bytes, in decimal digits", truncate(string(value), 40))
			case n > MaxFrame:
				fe := &frameError{fatal: true, msg: fmt.Sprintf("parse error: a frame of %s bytes exceeds the limit of %d bytes; pid cannot skip it, and closes the connection", truncate(string(value), 40), MaxFrame)}
				s.r.Discard(len(line))
				return nil, fe
			default:
				length = n
			}
		}
		s.r.Discard(len(line))
	}
	if length < 0 {
		if bad == "" {
			bad = "parse error: frame without Content-Length header"
		}
		s.resync = true
		return nil, &frameError{msg: bad}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	if bad != "" {
		return nil, &frameError{msg: bad}
	}
	return body, nil
}

// parseLength reads a Content-Length value: decimal digits only (no sign, no space inside),
// and reports whether it is one. More than maxLengthDigits digits give MaxFrame+1.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n := 0
	for i, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i < maxLengthDigits {
			n = n*10 + int(c-'0')
		}
	}
	if len(v) > maxLengthDigits || n > MaxFrame {
		return MaxFrame + 1, true
	}
	return n, true
}

// peekLine returns the next line of the input, line end included, without consuming it (the
// caller discards what it used). It returns errLineTooLong when no line end comes within
// maxHeaderLine bytes, and at the end of the input what is left with io.EOF. It waits for no
// more input than the line needs.
func (s *Stream) peekLine() ([]byte, error) {
	searched := 0
	for {
		n := max(s.r.Buffered(), searched+1)
		n = min(n, maxHeaderLine)
		buf, err := s.r.Peek(n)
		if i := bytes.IndexByte(buf[searched:], '\n'); i >= 0 {
			return buf[:searched+i+1], nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) >= maxHeaderLine {
			return nil, errLineTooLong
		}
		searched = len(buf)
	}
}

const contentLengthHeader = "content-length:"

// skipToHeader discards input up to the next "Content-Length:" (in any case), which is then
// the next thing read. It holds no more than the reader's buffer.
func (s *Stream) skipToHeader() error {
	const keep = len(contentLengthHeader) - 1 // a match may start in the last bytes seen
	for {
		if s.r.Buffered() < len(contentLengthHeader) {
			if buf, err := s.r.Peek(len(contentLengthHeader)); err != nil {
				s.r.Discard(len(buf))
				return err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if i := indexFold(buf, contentLengthHeader); i >= 0 {
			s.r.Discard(i)
			return nil
		}
		s.r.Discard(len(buf) - keep)
	}
}

// indexFold returns where lower (lower-case ASCII) starts in b, in any case, or -1.
func indexFold(b []byte, lower string) int {
	for i := 0; i+len(lower) <= len(b); i++ {
		j := 0
		for j < len(lower) && toLower(b[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return i
		}
	}
	return -1
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isHeaderName reports whether s is an HTTP header field name (a token).
func isHeaderName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
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

// problem is why a frame holds no message: the answer to send, with the id it can carry (nil
// for null).
type problem struct {
	id   json.RawMessage
	code int64
	msg  string
}

// parseMessage checks that body is one JSON-RPC request, notification or response, in one
// pass over it (rpcwire.Scan), and returns it, or the problem to answer. Ids may be any
// string or number; null is refused for a request, since jsonrpc2 clients take an id-null
// answer for a reply to nothing. Valid JSON nested deeper than rpcwire.MaxDepth is refused
// with -32600 and the message's id, except a response, which goes to the request of pid's it
// answers (whose decoding then fails on the depth).
func parseMessage(body []byte) (*rpcconn.Message, *problem) {
	env, err := rpcwire.Scan(body)
	var se *rpcwire.SyntaxError
	if errors.As(err, &se) {
		return nil, &problem{nil, jsonrpc2.CodeParseError, "parse error: the message is not valid JSON"}
	}
	tooDeep := errors.Is(err, rpcwire.ErrTooDeep)
	switch env.Top {
	case '{':
	case '[':
		return nil, &problem{nil, jsonrpc2.CodeInvalidRequest, "invalid request: batch messages are not supported"}
	default:
		return nil, &problem{nil, jsonrpc2.CodeInvalidRequest, "invalid request: a message must be a JSON object"}
	}
	m := &rpcconn.Message{}
	if env.ID != nil && string(env.ID) != "null" {
		key, ok := rpcwire.IDKey(env.ID)
		if !ok {
			return nil, &problem{nil, jsonrpc2.CodeInvalidRequest, "invalid request: id must be a string or a number"}
		}
		m.ID, m.Key = append(json.RawMessage(nil), env.ID...), key
	}
	if v, ok := rpcwire.String(env.JSONRPC); !ok || v != "2.0" {
		return nil, &problem{m.ID, jsonrpc2.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`}
	}
	isReq := env.Method != nil
	isResp := env.Result != nil || env.Error != nil
	switch {
	case isReq && isResp, !isReq && !isResp:
		return nil, &problem{m.ID, jsonrpc2.CodeInvalidRequest, "invalid request: a message needs either a method or a result/error"}
	case isResp:
		m.Response, m.Result, m.Error = true, env.Result, env.Error
		return m, nil
	case env.ID != nil && m.ID == nil:
		// jsonrpc2 clients would take the answer (id null) for a reply to nothing, and wait.
		return nil, &problem{nil, jsonrpc2.CodeInvalidRequest, "invalid request: a request id must be a string or a number, not null"}
	case tooDeep:
		return nil, &problem{m.ID, jsonrpc2.CodeInvalidRequest, fmt.Sprintf("invalid request: %v, pid's limit", rpcwire.ErrTooDeep)}
	}
	method, ok := rpcwire.String(env.Method)
	if !ok {
		return nil, &problem{m.ID, jsonrpc2.CodeInvalidRequest, "invalid request: method must be a string"}
	}
	m.Method = method
	if p := env.Params; p != nil {
		if p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return nil, &problem{m.ID, jsonrpc2.CodeInvalidRequest, "invalid request: params must be an object or an array"}
		}
		m.Params = p
	}
	return m, nil
}
