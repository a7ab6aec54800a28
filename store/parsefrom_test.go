// This file tests reading a session file a line at a time (parseFrom, what a load does)
// against reading it whole (parse): lines longer than the reader's buffer, lines crossing
// its boundaries, strings with and without escapes, and a torn last line all read the same,
// and no entry keeps a string that points into the reader's reused buffer.

package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseFromEqualsParse(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":1,"id":"s","cwd":"/w","createdAt":"2026-03-01T12:00:00Z","tools":[]}` + "\n")
	parent := "null"
	for i := range 60 {
		// Sizes around the reader's 64 KB buffer; every other text escaped.
		text := strings.Repeat(fmt.Sprintf("plain %d ", i), (i*2300)/9+1)
		if i%2 == 1 {
			text = strings.Repeat(`line \"q\"\n`, (i*2300)/12+1)
		}
		id := fmt.Sprintf("e%03d", i)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"%s"}],"timestamp":5}}`+"\n", id, parent, i, text)
		parent = fmt.Sprintf("%q", id)
	}
	b.WriteString(`{"type":"message","id":"torn","parentId":"e059","message":{"role":"user","con`)
	content := b.String()

	want, err := parse("f.jsonl", "s", []byte(content), true)
	if err != nil {
		t.Fatal(err)
	}
	got, size, err := parseFrom("f.jsonl", "s", strings.NewReader(content), int64(len(content)), true)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(content)) || got.tornAt != want.tornAt || got.leaf != want.leaf {
		t.Errorf("read %d of %d bytes, torn at %d (want %d), leaf %q (want %q)", size, len(content), got.tornAt, want.tornAt, got.leaf, want.leaf)
	}
	if len(got.loaded.Entries) != 60 || !reflect.DeepEqual(got.loaded, want.loaded) {
		t.Fatalf("line by line: %d entries, %d problems; whole: %d entries, %d problems; they differ",
			len(got.loaded.Entries), len(got.loaded.Problems), len(want.loaded.Entries), len(want.loaded.Problems))
	}
	// The reader's buffer is reused for each line: an entry pointing into it would now
	// read another line's bytes, and differ from what parse read (checked above after the
	// whole file was read).
	for i, e := range got.loaded.Entries {
		if e.Message.ToolCallID != fmt.Sprintf("c%d", i) {
			t.Errorf("entry %d has call id %q", i, e.Message.ToolCallID)
		}
	}
}
