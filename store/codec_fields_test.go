package store

// Every field of a message and of its blocks survives the writer and the fast reader
// (issue 33; issue 32: the fast reader dropped thinking blocks' signature and redacted, so a
// loaded session sent its thinking back as text). The fast reader must take the line itself:
// were it to leave it to encoding/json, a load would be slow and still right by luck.

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pid-agent/pid/internal/codectest"
)

func TestFastDecodeKeepsEveryField(t *testing.T) {
	codectest.CheckFieldsListed(t)
	for _, m := range codectest.Full() {
		e := msg(1, m)
		e.ID, e.ParentID = "e1", "e0"
		line, err := appendEntry(nil, &e)
		if err != nil {
			t.Fatalf("%s: %v", m.Role, err)
		}
		got, _, ok := fastEntry(string(line[:len(line)-1]), true)
		if !ok {
			t.Fatalf("the fast reader leaves a %s message the writer wrote to encoding/json: %s", m.Role, line)
		}
		if d := cmp.Diff(m, *got.Message); d != "" {
			t.Errorf("a %s message loses fields through the writer and the fast reader (-written +read):\n%s\nline: %s", m.Role, d, line)
		}
		slow, _, err := decodeEntry(line[:len(line)-1], true)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(m, *slow.Message); d != "" {
			t.Errorf("a %s message loses fields through the writer and encoding/json (-written +read):\n%s", m.Role, d)
		}
	}
}
