// This file fuzzes the readers: the fast message reader must read every line it accepts
// exactly as encoding/json (through llm.Message.UnmarshalJSON) does, and reading any file
// content must never panic and always give a consistent tree.

package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzLines are seeds: lines the writer makes, and lines hand-made to probe where the fast
// reader must give up or agree.
func fuzzLines(t testing.TB) []string {
	var b []byte
	var lines []string
	for i, m := range append([]Entry{msg(1, userMsg("héllo \"world\"\n\t\u2028")), msg(2, assistantMsg(2)), msg(3, resultMsg(0))}, Entry{Kind: KindModel, Timestamp: at(4), Model: []byte(`{"id":"m"}`)}) {
		m.ID = "e" + string(rune('a'+i))
		b = b[:0]
		b, err := appendEntry(b, &m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.TrimSuffix(string(b), "\n"))
	}
	env := `{"type":"message","id":"x","parentId":null,"timestamp":"2026-03-01T12:00:00.000Z","message":`
	for _, m := range []string{
		`{"role":"user","content":"plain string","timestamp":5}`,
		`{"role":"user","content":null}`,
		`{"role":"user","content":[]}`,
		`{"Role":"user","content":[]}`,
		`{"role":"user","role":"assistant","content":[]}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":null}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{ "a" : [1, 2] }}],"usage":{"input":1,"output":2,"totalTokens":3}}`,
		`{"role":"assistant","content":[{"type":"text","text":"\ud83d\ude00 \ud800 \u0041"}],"stopReason":"stop"}`,
		`{"role":"assistant","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"usage":null}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"n":1e400},"isError":true}`,
		`{"role":"toolResult","toolCallId":"c","content":[],"details":[1,"a",null],"isError":null,"addedToolNames":["a","b"]}`,
		`{"role":"user","content":[{"type":"video"}]}`,
		`{"role":"user","content":[null]}`,
		`{"role":"user","content":[],"timestamp":1.5}`,
		`{"role":"user","content":[],"timestamp":1e3}`,
		`{"role":"user","content":[],"timestamp":99999999999999999999}`,
		`{"role":"user","content":[],"extra":{"deep":[1,2,{"x":null}]}}`,
		`{"role":"user","content":[{"type":"text","text":"a","TEXT":"b"}]}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"c2ln"},{"type":"thinking","thinking":"","signature":"ZGF0YQ==","redacted":true}],"stopReason":"stop"}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":null,"redacted":null}]}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","redacted":"yes"}]}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","Signature":"x"}]}`,
		`{"role":"wizard"}`,
	} {
		lines = append(lines, env+m+"}")
	}
	lines = append(lines,
		`{"type":"message","id":"x","parentId":5,"message":{"role":"user"}}`,
		`{"type":"message","id":"x","Id":"y","message":{"role":"user"}}`,
		`{"type":"message","id":"x","timestamp":"yesterday","message":{"role":"user"}}`,
		`{"type":"message","id":"x","timestamp":null,"message":{"role":"user"},"compaction":5}`,
		`{"type":"message","id":"x","message":{"role":"user"},"future":[1,{"a":"b"}]}`,
		"{\"type\":\"message\",\"id\":\"x\",\"message\":{\"role\":\"user\",\"content\":\"\xff\"}}",
		`{"type":"message","id":"x","message":{"role":"user"}`,
		`[1,2]`,
	)
	return lines
}

func FuzzFastDecode(f *testing.F) {
	for _, l := range fuzzLines(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, decode := range []bool{true, false} {
			fast, fastRaw, ok := fastEntry(line, decode)
			if !ok {
				continue
			}
			slow, slowRaw, err := decodeEntry([]byte(line), decode)
			if err != nil {
				t.Fatalf("decode %v: the fast reader accepted %q, encoding/json refuses it: %v", decode, line, err)
			}
			if diff := cmp.Diff(slow, fast); diff != "" || fastRaw != slowRaw {
				t.Fatalf("decode %v: readers disagree on %q (-encoding/json +fast):\n%s\nraw %q vs %q", decode, line, diff, slowRaw, fastRaw)
			}
		}
	})
}

// TestFastDecodeTakesWhatTheWriterWrites checks that the fast reader is the one that reads
// the writer's lines (else the load target is met by luck), and gives up on the probes.
func TestFastDecodeTakesWhatTheWriterWrites(t *testing.T) {
	lines := fuzzLines(t)
	for _, l := range lines[:3] {
		if _, _, ok := fastEntry(l, true); !ok {
			t.Errorf("the fast reader gave up on a line the writer wrote: %s", l)
		}
	}
	for _, probe := range []string{`"redacted":"yes"`, `"Signature"`, `"Role"`, `"role":"user","role"`, `"TEXT"`, `1e400`, `"Id"`, `"compaction":5`, "\xff", `"timestamp":1.5`} {
		for _, l := range lines {
			if strings.Contains(l, probe) {
				if _, _, ok := fastEntry(l, true); ok {
					t.Errorf("the fast reader took %s, which it must leave to encoding/json", l)
				}
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	header := `{"type":"session","version":1,"id":"s","cwd":"/w","createdAt":"2026-03-01T12:00:00Z","tools":[]}` + "\n"
	lines := fuzzLines(f)
	f.Add(header + strings.Join(lines, "\n") + "\n")
	f.Add(header + lines[0] + "\n" + `{"type":"message","id":"eb","parentId":"ea"` + "\n" + lines[2])
	f.Add(header + "\n\n" + lines[1] + "\n")
	f.Fuzz(func(t *testing.T, content string) {
		for _, decode := range []bool{true, false} {
			p, err := parse("f.jsonl", "s", []byte(content), decode)
			if err != nil {
				continue
			}
			l := p.loaded
			ids := map[string]bool{}
			for _, e := range l.Entries {
				if ids[e.ID] || (e.ParentID != "" && !ids[e.ParentID]) {
					t.Fatalf("entry %s (parent %q): a repeated id, or a parent not before it", e.ID, e.ParentID)
				}
				ids[e.ID] = true
			}
			for i, e := range l.Branch {
				if (i == 0) != (e.ParentID == "") || (i > 0 && e.ParentID != l.Branch[i-1].ID) {
					t.Fatalf("branch entry %d (%s, parent %q) does not follow the one before", i, e.ID, e.ParentID)
				}
			}
			if n := len(l.Entries); n > 0 && (l.Branch[len(l.Branch)-1].ID != l.Entries[n-1].ID || p.leaf != l.Entries[n-1].ID) {
				t.Fatal("the branch does not end at the last entry")
			}
			if !decode && len(p.raw) != len(l.Entries) {
				t.Fatal("raw messages and entries differ in number")
			}
			// Reading line by line (as a load does) gives the same.
			q, size, err := parseFrom("f.jsonl", "s", strings.NewReader(content), int64(len(content)), decode)
			if err != nil {
				t.Fatalf("parse read it, parseFrom failed: %v", err)
			}
			if size != int64(len(content)) || q.tornAt != p.tornAt || q.leaf != p.leaf || !reflect.DeepEqual(q.loaded, p.loaded) || !reflect.DeepEqual(q.raw, p.raw) {
				t.Fatalf("parseFrom read %d bytes (of %d), torn at %d (%d):\n%+v\nparse:\n%+v", size, len(content), q.tornAt, p.tornAt, q.loaded, p.loaded)
			}
		}
	})
}
