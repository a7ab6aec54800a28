// This file measures the costs issue 12 sets targets for: appending one message and a batch
// of results, loading a 10,000-message session, listing, and the bytes a message takes.

package store

import (
	"fmt"
	"testing"

	"github.com/pid-agent/pid/llm"
)

// sessionEntries is where the append benchmarks start a new file: a file's id set, which
// every Append consults, then stays at the size of a long session's.
const sessionEntries = 10000

// rotate closes f and returns a new session file, outside the timer.
func rotate(b *testing.B, s *Store, f *File) *File {
	b.StopTimer()
	f.Close()
	f = create(b, s, "/w")
	b.StartTimer()
	return f
}

func BenchmarkAppendOne(b *testing.B) {
	s := newStore(b)
	f := create(b, s, "/w")
	e := msg(1, assistantMsg(1)) // about 300 bytes of JSON
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%sessionEntries == sessionEntries-1 {
			f = rotate(b, s, f)
		}
		if _, err := f.Append(e); err != nil {
			b.Fatal(err)
		}
		n++
	}
	e.ID, e.ParentID = "abcdefgh", "abcdefgh"
	line, _ := appendEntry(nil, &e)
	b.ReportMetric(float64(len(line)), "bytes/entry")
}

func BenchmarkAppendBatch8(b *testing.B) {
	s := newStore(b)
	f := create(b, s, "/w")
	batch := make([]Entry, 8)
	for i := range batch {
		batch[i] = msg(1, resultMsg(i)) // about 1.2 KB each
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%(sessionEntries/8) == 0 {
			f = rotate(b, s, f)
		}
		if _, err := f.Append(batch...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurn7 saves what one turn of the daemon's W1 workload would: an assistant
// message with 7 tool calls, then the 7 small results of no-op tools in one Append. It
// reports the cost per tool call, to set against pid's per-call cost.
func BenchmarkTurn7(b *testing.B) {
	s := newStore(b)
	f := create(b, s, "/w")
	a := msg(1, assistantMsg(7))
	results := make([]Entry, 7)
	for i := range results {
		results[i] = msg(2, llm.Message{Role: llm.RoleToolResult, ToolCallID: fmt.Sprintf("call_%02d_Xk3b9QpL", i), ToolName: "noop",
			Content: []llm.Content{llm.Text("ok")}, Timestamp: 1772366402000})
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%(sessionEntries/8) == 0 {
			f = rotate(b, s, f)
		}
		if _, err := f.Append(a); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Append(results...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/7, "ns/call")
}

// session10k writes a session of 10,000 messages shaped like a coding session: per turn a
// user message, an assistant message with 3 tool calls, 3 results of about 1 KB, and a
// closing assistant message. It returns the session's id.
func session10k(b *testing.B, s *Store) string {
	b.Helper()
	f := create(b, s, "/w")
	n := 0
	for n < 10000 {
		turn := []Entry{msg(n, userMsg("Please fix the failing handler test and explain the cause.")), msg(n, assistantMsg(3))}
		for i := range 3 {
			turn = append(turn, msg(n, resultMsg(i)))
		}
		end := assistantMsg(0)
		end.StopReason = "stop"
		turn = append(turn, msg(n, end))
		if n+len(turn) > 10000 {
			turn = turn[:10000-n]
		}
		if _, err := f.Append(turn...); err != nil {
			b.Fatal(err)
		}
		n += len(turn)
	}
	f.Close()
	return f.ID()
}

func BenchmarkLoad10k(b *testing.B) {
	s := newStore(b)
	id := session10k(b, s)
	path, _ := s.find(id)
	size := fileSize(b, path)
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.Read(id)
		if err != nil || len(l.Branch) != 10000 {
			b.Fatalf("Read: %v, %d entries", err, len(l.Branch))
		}
	}
	b.ReportMetric(float64(size)/10000, "bytes/message")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/load")
}

func BenchmarkOpenSession10k(b *testing.B) {
	s := newStore(b)
	id := session10k(b, s)
	b.ReportAllocs()
	for b.Loop() {
		f, _, err := s.OpenSession(id)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkList100 lists 100 sessions of 50 messages: first reading (the cache is
// emptied each time), then cached.
func BenchmarkList100(b *testing.B) {
	s := newStore(b)
	for range 100 {
		f := create(b, s, "/w")
		for range 10 {
			f.Append(msg(1, userMsg("go")), msg(2, assistantMsg(3)), msg(3, resultMsg(0)), msg(3, resultMsg(1)), msg(3, resultMsg(2)))
		}
		f.Close()
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			s.mu.Lock()
			clear(s.summaries)
			s.mu.Unlock()
			if sums, _ := s.List(""); len(sums) != 100 {
				b.Fatal(len(sums))
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if sums, _ := s.List(""); len(sums) != 100 {
				b.Fatal(len(sums))
			}
		}
	})
}
