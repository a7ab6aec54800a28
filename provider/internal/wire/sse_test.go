package wire_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/provider/internal/wire"
)

func readAll(t *testing.T, r io.Reader) ([]wire.Event, error) {
	t.Helper()
	sr := wire.NewSSEReader(r)
	var evs []wire.Event
	for {
		ev, err := sr.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReaderFormat(t *testing.T) {
	in := ": comment first\n" +
		"event: message_start\ndata: {\"a\":1}\n\n" +
		"data:no-space\r\n\r\n" + // CRLF, and no space after the colon
		"data: line one\rdata: line two\r\r" + // bare CR
		"id: 7\nretry: 100\ndata:  two spaces\n\n" + // id and retry ignored; one space stripped
		"event: lonely\n\n" + // no data: not dispatched, and its name does not leak
		"data\n\n" + // field with no colon: empty data
		"data: [DONE]\n\n" +
		"data: cut off at the end"
	evs, err := readAll(t, strings.NewReader(in))
	if err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	want := []wire.Event{
		{Name: "message_start", Data: `{"a":1}`},
		{Data: "no-space"},
		{Data: "line one\nline two"},
		{Data: " two spaces"},
		{Data: ""},
		{Data: "[DONE]"},
	}
	if d := cmp.Diff(want, evs); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// One byte per read: a CRLF split across reads must not yield an extra empty line (which
// would dispatch an event early).
func TestSSEReaderSplitReads(t *testing.T) {
	in := "data: a\r\ndata: b\r\n\r\nevent: e\r\ndata: c\r\n\r\n"
	evs, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)))
	if err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	want := []wire.Event{{Data: "a\nb"}, {Name: "e", Data: "c"}}
	if d := cmp.Diff(want, evs); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: x\n\ndata: y"), iotest.ErrReader(boom))
	evs, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(evs) != 1 || evs[0].Data != "x" {
		t.Errorf("events = %+v, want the one complete event", evs)
	}
}

func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	evs, err := readAll(t, strings.NewReader("data: "+long+"\n\n"))
	if err != io.EOF || len(evs) != 1 || evs[0].Data != long {
		t.Fatalf("a 1 MiB line: %d events, err %v", len(evs), err)
	}
}
