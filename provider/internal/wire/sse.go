// This file reads server-sent events (the text/event-stream format both APIs stream in).

package wire

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// Event is one server-sent event: its type (the "event:" field, empty when the server
// sent none) and its data (the "data:" lines joined by newlines).
type Event struct {
	Name string
	Data string
}

// maxLine bounds one line of the stream. A whole tool call in one chunk (as local servers
// send) can be long, so the bound is generous; a longer line is a malformed stream.
const maxLine = 16 << 20

// SSEReader splits a text/event-stream body into events, following the WHATWG rules that
// matter here: lines end in \n, \r\n or \r; a line starting with ':' is a comment (servers
// send them as keep-alives); "data:" lines accumulate; a blank line dispatches the event;
// "id:" and "retry:" are read and ignored. An event with no data line is not dispatched.
type SSEReader struct {
	sc *bufio.Scanner
}

// NewSSEReader returns a reader of the events in r.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(scanLines)
	return &SSEReader{sc: sc}
}

// Next returns the next event. At the end of the body it returns io.EOF; an event cut off
// by the end (no blank line after it) is dropped, as the format says, so a stream that
// stops mid-event ends with io.EOF too and the caller decides from what it saw whether
// the stream was complete. Read errors are returned as they are.
func (r *SSEReader) Next() (Event, error) {
	var ev Event
	var data strings.Builder
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			ev = Event{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF
}

// scanLines is bufio.ScanLines extended to the three line endings of the format. A \r at
// the end of the buffer waits for more input, since a \n may follow it.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
