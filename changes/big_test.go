// This file measures the diff's cost on a large file by counting (its steps, allocations and
// bytes), never by time, and checks a file whose minimal diff costs too much.

package changes

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/udiff"
)

// bigFile returns a file of n lines of code and the same with changes changed places, spread
// evenly: a line replaced, a line added or a line removed, in turn. With repeats, one line
// in five is blank and one in seven a closing brace, as in code.
func bigFile(n, changes int, repeats bool) (before, after string) {
	var a, b strings.Builder
	step := n / changes
	for i := range n {
		l := fmt.Sprintf("\tx%d := compute(%d, %q)\n", i%97, i, "line")
		switch {
		case repeats && i%7 == 0:
			l = "\t}\n"
		case repeats && i%5 == 0:
			l = "\n"
		}
		a.WriteString(l)
		if i%step != step/2 {
			b.WriteString(l)
			continue
		}
		switch (i / step) % 3 {
		case 0:
			fmt.Fprintf(&b, "\tchanged(%d)\n", i)
		case 1:
			b.WriteString(l)
			fmt.Fprintf(&b, "\tadded(%d)\n", i)
		}
	}
	return a.String(), b.String()
}

// internLines returns the line ids of a and b, as Compare makes them.
func internLines(a, b string) ([]int32, []int32) {
	ids := map[string]int32{}
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return intern(udiff.Split(a)), intern(udiff.Split(b))
}

func TestBigFile(t *testing.T) {
	for _, repeats := range []bool{false, true} {
		t.Run(fmt.Sprint("repeats=", repeats), func(t *testing.T) {
			a, b := bigFile(50_000, 500, repeats)
			ba, bb := []byte(a), []byte(b)
			d := diffIDs(internLines(a, b))
			var f File
			allocs := testing.AllocsPerRun(1, func() { f = Compare("f", Side{Data: ba}, Side{Data: bb}) })
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			Compare("f", Side{Data: ba}, Side{Data: bb})
			runtime.ReadMemStats(&m1)
			bytes := m1.TotalAlloc - m0.TotalAlloc
			t.Logf("50,000 lines (%d bytes), 500 changes: %d hunks, %d steps, %.0f allocations, %d bytes allocated", len(a), len(f.Hunks), d.work, allocs, bytes)
			if len(f.Hunks) != 500 || f.Coarse || d.coarse || f.Added != 334 || f.Removed != 333 {
				t.Fatalf("%d hunks (coarse %v), +%d -%d; want 500 hunks, +334 -333", len(f.Hunks), f.Coarse, f.Added, f.Removed)
			}
			// The cost grows with the lines and the changes, not with the lines squared (2.5
			// billion): under 40 steps a line, fewer allocations than one a line (50 a
			// hunk), under 200 bytes a line of the two files.
			if d.work > 40*50_000 || allocs > 50*500 || bytes > 200*100_000 {
				t.Errorf("%d steps, %.0f allocations, %d bytes: more than the bounds", d.work, allocs, bytes)
			}

			// Undo of every other hunk: the list after it shows exactly the others.
			var odd, even []string
			for i, h := range f.Hunks {
				if i%2 == 0 {
					even = append(even, h.ID)
				} else {
					odd = append(odd, h.ID)
				}
			}
			res := Undo("f", Side{Data: ba}, Side{Data: bb}, even, false)
			if len(res.Undone) != 250 || len(res.Skipped) != 0 {
				t.Fatalf("undo of 250 hunks: %d undone, %v skipped", len(res.Undone), res.Skipped)
			}
			left := Compare("f", Side{Data: ba}, Side{Data: res.Data})
			if !slices.Equal(ids(left), odd) {
				t.Errorf("after undoing every other hunk, %d hunks listed, want the other 250 with their ids", len(left.Hunks))
			}
			all := Undo("f", Side{Data: ba}, Side{Data: res.Data}, nil, false)
			if string(all.Data) != a {
				t.Error("undo of the rest does not give the file back")
			}
		})
	}
}

// TestCoarse checks a pair of files whose minimal diff would cost the product of their
// lengths (two lines repeated at random): the work stops at its bound, the changed middle is
// one hunk that says so, and undoing it gives the file back.
func TestCoarse(t *testing.T) {
	defer func(w int) { maxWork = w }(maxWork)
	maxWork = 1 << 20 // the same as the real bound, sooner
	r := rand.New(rand.NewPCG(1, 2))
	file := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString([]string{"a\n", "b\n"}[r.IntN(2)])
		}
		return b.String()
	}
	a, b := "start\n"+file(20_000)+"end\n", "start\n"+file(20_000)+"end\n"
	d := diffIDs(internLines(a, b))
	if !d.coarse || d.work > maxWork+2*40_000 {
		t.Fatalf("coarse %v after %d steps (bound %d)", d.coarse, d.work, maxWork)
	}
	f := Compare("f", text(a), text(b))
	if !f.Coarse || len(f.Hunks) != 1 || !strings.HasSuffix(f.Hunks[0].Header, "a finer diff would cost too much") || f.Hunks[0].OldStart != 1 || f.Hunks[0].OldLines != 20_002 {
		t.Fatalf("coarse %v, hunks %+v", f.Coarse, f.Hunks)
	}
	res := Undo("f", text(a), text(b), nil, false)
	if string(res.Data) != a {
		t.Error("undo of the coarse hunk does not give the file back")
	}
}

// TestOverMaxText checks a text file over MaxTextBytes: compared as a whole, one hunk that
// says so, undone whole.
func TestOverMaxText(t *testing.T) {
	big := strings.Repeat("a line of text\n", MaxTextBytes/15+1)
	changed := "changed\n" + big[len("a line of text\n"):]
	f := Compare("f", text(big), text(changed))
	if len(f.Hunks) != 1 || !f.Coarse || f.Binary || f.Hunks[0].Header != "the file is over 8 MiB: its change is one hunk, the whole file" || !strings.HasPrefix(f.Hunks[0].ID, "bin.") {
		t.Fatalf("%+v", f.Hunks)
	}
	res := Undo("f", text(big), text(changed), []string{f.Hunks[0].ID}, false)
	if string(res.Data) != big || res.Lines[0].Kind != UndoneWhole {
		t.Errorf("undo: %d bytes, %+v", len(res.Data), res.Lines)
	}
	if g := Compare("f", text(big), text(big)); len(g.Hunks) != 0 {
		t.Errorf("the same large file: %+v", g.Hunks)
	}
}
