package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWorkloads runs every workload once, small, in both modes: counts are checked by runOnce.
func TestWorkloads(t *testing.T) {
	old := sleepFor
	sleepFor = 0
	defer func() { sleepFor = old }()
	for _, d := range perfDefs {
		for _, mode := range modes {
			s := spec{ID: d.ID, Tool: d.Tool, T: 3, K: d.K, Mode: mode, Hooks: d.Hooks, LLM: d.LLM, Convert: "filter"}
			o, err := runOnce(s, true)
			if err != nil {
				t.Fatal(err)
			}
			if o.counts[evTurnStart] != s.T+1 || len(o.turnDurations) != s.T {
				t.Errorf("%s %s: %d turn starts, %d tool turns timed", d.ID, mode, o.counts[evTurnStart], len(o.turnDurations))
			}
			if d.Tool == "update10" && o.counts[evToolUpdate] != 10*s.T*s.K {
				t.Errorf("%s %s: %d updates", d.ID, mode, o.counts[evToolUpdate])
			}
		}
	}
}

// The children run at the daemon's GC target: the one cmd/pid sets when GOGC is not in its
// environment.
func TestGCTargetIsTheDaemons(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "pid", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`debug\.SetGCPercent\((\d+)\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("cmd/pid/main.go sets no GC target (debug.SetGCPercent)")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != daemonGOGC {
		t.Errorf("cmd/pid sets GOGC %d, pidbench measures with %d", n, daemonGOGC)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, r results) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk := func(scale float64) results {
		var r results
		for _, id := range []string{"W1", "W1k1", "W2", "W3", "W4", "W5t"} {
			for _, mode := range modes {
				r.Perf = append(r.Perf, perfRow{ID: id, Mode: mode, PerCallUs: summary{Median: scale}, TurnMs: summary{Median: 20 + scale/100}})
			}
		}
		r.Mem = []memRow{{Mode: "parallel", MaxRssMB: summary{Median: 10 * scale}}}
		return r
	}
	var out bytes.Buffer
	if err := runCompare(&out, write("pi.json", mk(40)), write("pid.json", mk(2))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"W1 pi/pid per-call ratio: 20.0\n", "W5t pi/pid per-call ratio: 20.0\n", "W5 pi/pid peak-RSS ratio: 20.0\n",
		"T=2000/T=200 per-call cost ratio (W5t/W1, parallel): pi 1.00, pid 1.00\n",
		"W4 parallel turn_ms - 20 ms: pi 0.400 ms, pid 0.020 ms\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}
}

func benchWorkload(b *testing.B, s spec) {
	if s.Convert == "" {
		s.Convert = "filter"
	}
	for b.Loop() {
		if _, err := runOnce(s, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.T*s.K)/1000, "us/call")
}

func BenchmarkW1Parallel(b *testing.B) {
	benchWorkload(b, spec{ID: "W1", Tool: "noop", T: 200, K: 8, Mode: "parallel"})
}
func BenchmarkW1Sequential(b *testing.B) {
	benchWorkload(b, spec{ID: "W1", Tool: "noop", T: 200, K: 8, Mode: "sequential"})
}
func BenchmarkW1k1Parallel(b *testing.B) {
	benchWorkload(b, spec{ID: "W1k1", Tool: "noop", T: 200, K: 1, Mode: "parallel"})
}
func BenchmarkW3Parallel(b *testing.B) {
	benchWorkload(b, spec{ID: "W3", Tool: "update10", T: 200, K: 8, Mode: "parallel"})
}
func BenchmarkW5tParallel(b *testing.B) {
	benchWorkload(b, spec{ID: "W5t", Tool: "noop", T: 2000, K: 8, Mode: "parallel"})
}
