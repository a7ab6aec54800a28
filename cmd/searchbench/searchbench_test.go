package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMedianIsTheMiddleRun(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	in := ms(9, 1, 5, 3, 7)
	if got := median(in); got != 5*time.Millisecond {
		t.Errorf("median of 9 1 5 3 7 = %v, want 5ms", got)
	}
	if in[0] != 9*time.Millisecond {
		t.Error("median sorted its argument")
	}
	if got := median(ms(4, 2, 8, 6)); got != 4*time.Millisecond {
		t.Errorf("median of four = %v, want the lower middle 4ms", got)
	}
}

// A difference in result counts is the row's warning; an earlier note is kept.
func TestRowWarnsWhenCountsDiffer(t *testing.T) {
	r := newRow("grep x", 300*time.Millisecond, 10, "rg", 100*time.Millisecond, 12, "")
	if r.Ratio != 3 || r.Note != "pid found 10, rg found 12" {
		t.Errorf("row %+v", r)
	}
	if r := newRow("grep y", time.Second, 5, "rg", time.Second, 5, ""); r.Note != "" {
		t.Errorf("equal counts warned: %q", r.Note)
	}
	if r := newRow("grep z", time.Second, 1000, "rg", time.Second, 5000, "pid stopped"); r.Note != "pid stopped" {
		t.Errorf("note replaced: %q", r.Note)
	}
}

func TestCountLinesCountsOutputAndTakesNothingFoundAsZero(t *testing.T) {
	_, n, err := countLines("", "sh", "-c", "printf 'a\\nb\\nc\\n'")
	if err != nil || n != 3 {
		t.Errorf("three lines: %d, %v", n, err)
	}
	_, n, err = countLines("", "sh", "-c", "exit 1")
	if err != nil || n != 0 {
		t.Errorf("exit 1 without output: %d, %v; want 0 and no error", n, err)
	}
	if _, _, err = countLines("", "sh", "-c", "echo x; exit 2"); err == nil {
		t.Error("exit 2 is not an error")
	}
}

func TestVmHWM(t *testing.T) {
	status := "Name:\tpid\nVmPeak:\t  900 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 100 kB\n"
	if got := vmHWM(status); got != 12345*1024 {
		t.Errorf("vmHWM = %d", got)
	}
	if got := vmHWM("Name:\tx\n"); got != 0 {
		t.Errorf("without VmHWM: %d", got)
	}
}

// Debian's block at the end of the kernel's .gitignore goes; upstream's lines stay.
func TestDropDebianIgnore(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".gitignore")
	upstream := "# SPDX\n.*\n*.o\n/rust-project.json\n"
	if err := os.WriteFile(p, []byte(upstream+"\n#\n# Debian packaging: ignore everything at the top level\n#\n/*\n!/debian/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dropDebianIgnore(p); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != upstream+"\n" {
		t.Errorf("left %q", got)
	}
}

func TestBigFileReachesItsSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := writeBigFile(p, 10000); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) < 10000 || len(b) >= 10000+len(bigLine(1)) || lines[0]+"\n" != bigLine(1) || lines[len(lines)-1]+"\n" != bigLine(len(lines)) {
		t.Errorf("%d bytes, %d lines, first %q", len(b), len(lines), lines[0])
	}
}

// pair warms each side up once, then alternates them, and gives each side's median.
func TestPairAlternatesAndTakesMedians(t *testing.T) {
	var order []string
	pidTimes := []int{100, 5, 3, 4}   // the warm-up's 100 is left out
	anchorTimes := []int{50, 2, 9, 1} // median of 2 9 1 is 2
	i, j := 0, 0
	b := &bench{reps: 3}
	p, pn, a, an, err := b.pair(func() (time.Duration, int, error) {
		order = append(order, "pid")
		i++
		return time.Duration(pidTimes[i-1]), 7, nil
	}, func() (time.Duration, int, error) {
		order = append(order, "anchor")
		j++
		return time.Duration(anchorTimes[j-1]), 8, nil
	})
	if err != nil || p != 4 || pn != 7 || a != 2 || an != 8 {
		t.Errorf("pair = %v %d %v %d %v", p, pn, a, an, err)
	}
	if got := strings.Join(order, " "); got != "pid anchor pid anchor pid anchor pid anchor" {
		t.Errorf("order %s", got)
	}
	n := 0
	_, _, _, _, err = b.pair(func() (time.Duration, int, error) { n++; return 1, n, nil }, func() (time.Duration, int, error) { return 1, 0, nil })
	if err == nil || !strings.Contains(err.Error(), "two runs of pid gave") {
		t.Errorf("changing counts: %v", err)
	}
}

// The generated stand-in for the kernel: enough copies, varied names, a .gitignore in every
// third copy, and a note saying it was generated.
func TestGenerateKernelSized(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	for _, f := range []string{"a.go", "sub/b.go"} {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "kernel")
	if err := generateKernelSized(src, dir, 7); err != nil {
		t.Fatal(err)
	}
	n, err := countFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Four copies of two files, two .gitignore files (copies 0 and 3), the note.
	if n != 4*2+2+1 {
		t.Errorf("%d files", n)
	}
	for _, p := range []string{"copy-00/src-a/.gitignore", "copy-03/src-d/.gitignore", "copy-02/src-c/sub/b.go"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "copy-01/src-b/.gitignore")); err == nil {
		t.Error("copy 1 has a .gitignore")
	}
	c, err := describeKernel(dir)
	if err != nil || c.kind != "go" || !strings.HasPrefix(c.about, "generated: 4 copies") {
		t.Errorf("describeKernel: %+v, %v", c, err)
	}
}
