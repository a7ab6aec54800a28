// Command searchbench measures pid's grep, find, read and edit (issue 15) against the tools
// people trust, in one run on one machine: the real bin/pid daemon over real pipes, each
// call through tools/execute, against ripgrep, fd and sed run as subprocesses.
//
//	go run ./cmd/searchbench [-pid bin/pid] [-cache .cache/searchbench] [-reps 5] [-quick] [-million] [-json out.json]
//
// (`make bench-search` builds pid and runs it; SEARCH_ARGS passes flags.) It installs
// ripgrep and fd with apt-get when they are missing and builds its corpora itself under
// -cache: Go's source tree, a kernel-sized tree (Debian's linux-source when apt can fetch
// it, else generated from copies of Go's tree), and with -million a tree of 1,000,001
// small files. Each corpus is made a git repository so that rg and fd apply its .gitignore
// files as pid does; rg and fd get --hidden and leave .git out, as pid does.
//
// Every case runs once to warm up, then -reps times, pid's runs and the anchor's
// alternating; the table gives medians and the ratio
// pid / anchor, and the result counts of both sides (a warning follows the table when
// they differ). It is pure measurement: nothing is asserted, and no test times anything.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// row is one line of the table.
type row struct {
	Case        string  `json:"case"`
	PidMs       float64 `json:"pidMs"`
	Anchor      string  `json:"anchor"`
	AnchorMs    float64 `json:"anchorMs"`
	Ratio       float64 `json:"ratio"`
	PidCount    int     `json:"pidCount"`
	AnchorCount int     `json:"anchorCount"`
	Note        string  `json:"note,omitempty"`
}

// grepCase is one grep measured on a tree.
type grepCase struct {
	label, pattern string
	ignoreCase     bool
}

// grepCases are the patterns for each kind of tree: each matches fewer lines than pid's
// grep shows (1,000 matches, 50 KB), so that both sides search the whole tree.
var grepCases = map[string][]grepCase{
	"go": {
		{"literal", `func NewReader\(`, false},
		{"regex", `func \(\w+ \*Reader\) Read\w*\(`, false},
		{"no match", "zqxjv_no_such_text_kw", false},
		{"ignoreCase", "errnotexist", true},
	},
	"c": {
		{"literal", `EXPORT_SYMBOL_GPL\(usb_`, false},
		{"regex", `static int \w+_probe\(struct usb_`, false},
		{"no match", "zqxjv_no_such_text_kw", false},
		{"ignoreCase", `ethtool_ops = \{`, true},
	},
}

// findGlob is the find case's pattern for each kind of tree.
var findGlob = map[string]string{"go": "*_test.go", "c": "*_test.c"}

func main() {
	bin := flag.String("pid", "bin/pid", "pid binary (make build)")
	cache := flag.String("cache", ".cache/searchbench", "folder for the corpora")
	reps := flag.Int("reps", 5, "timed runs per case, after one warm-up run")
	quick := flag.Bool("quick", false, "Go tree only, 3 runs per case")
	million := flag.Bool("million", false, "also build and search a tree of 1,000,001 small files (progress updates per second)")
	jsonOut := flag.String("json", "", "also write the rows as JSON to this file")
	flag.Parse()
	if *quick {
		*reps = 3
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
	abs, err := filepath.Abs(*cache)
	if err != nil {
		fail(err)
	}
	*cache = abs
	if err := os.MkdirAll(abs, 0o755); err != nil {
		fail(err)
	}
	if err := ensureTools(); err != nil {
		fail(err)
	}
	if _, err := os.Stat(*bin); err != nil {
		fail(fmt.Errorf("%s not found: run `make build` first, or give -pid", *bin))
	}

	goSrc, err := goTree(*cache)
	if err != nil {
		fail(err)
	}
	trees := []corpus{goSrc}
	if !*quick {
		k, err := kernelTree(*cache, goSrc)
		if err != nil {
			fail(err)
		}
		trees = append(trees, k)
	}
	var mil corpus
	if *million {
		if mil, err = millionTree(*cache); err != nil {
			fail(err)
		}
	}
	bigDir := filepath.Join(*cache, "big")
	huge := filepath.Join(bigDir, "huge.txt")
	if fi, err := os.Stat(huge); err != nil || fi.Size() < 300<<20 {
		fmt.Println("writing a 300 MB text file:", huge)
		if err := writeBigFile(huge, 300<<20); err != nil {
			fail(err)
		}
	}

	b := &bench{bin: *bin, home: filepath.Join(*cache, "home"), reps: *reps}
	// pid runs with a HOME of its own (no settings of the person running this); rg and fd
	// get the same, so that neither side reads a global git excludes file the other does
	// not.
	if err := os.MkdirAll(b.home, 0o755); err != nil {
		fail(err)
	}
	for k, v := range map[string]string{"HOME": b.home, "XDG_CONFIG_HOME": filepath.Join(b.home, "config")} {
		os.Setenv(k, v)
	}
	os.Unsetenv("RIPGREP_CONFIG_PATH")
	d, err := startDaemon(b.bin, b.home)
	if err != nil {
		fail(err)
	}
	fmt.Println()
	fmt.Println(machine())
	for _, t := range trees {
		fmt.Printf("corpus %s: %s, %d files (%s)\n", t.name, t.dir, t.files, t.about)
	}
	if *million {
		fmt.Printf("corpus %s: %s (%s)\n", mil.name, mil.dir, mil.about)
	}
	fmt.Printf("medians of %d runs after one warm-up run\n\n", b.reps)

	var rows []row
	perFile := map[string]float64{}
	for _, t := range trees {
		sid, err := d.newSession(t.dir)
		if err != nil {
			fail(err)
		}
		for _, g := range grepCases[t.kind] {
			r, err := b.grepRow(d, sid, t, g)
			if err != nil {
				fail(err)
			}
			rows = append(rows, r)
			fmt.Println(r.line())
			if g.label == "no match" {
				perFile[t.name] = r.PidMs * 1000 / float64(t.files)
			}
		}
		for _, anchor := range []string{"fd", "rg --files"} {
			r, err := b.findRow(d, sid, t, anchor)
			if err != nil {
				fail(err)
			}
			rows = append(rows, r)
			fmt.Println(r.line())
		}
	}
	sid, err := d.newSession(bigDir)
	if err != nil {
		fail(err)
	}
	r, err := b.readRow(d, sid, huge)
	if err != nil {
		fail(err)
	}
	rows = append(rows, r)
	fmt.Println(r.line())
	var progress string
	if *million {
		msid, err := d.newSession(mil.dir)
		if err != nil {
			fail(err)
		}
		var mrows []row
		mrows, progress, err = b.millionRows(d, msid, mil)
		if err != nil {
			fail(err)
		}
		for _, r := range mrows {
			fmt.Println(r.line())
		}
		rows = append(rows, mrows...)
	}
	d.stop()

	mem, err := b.editMemory(filepath.Join(*cache, "edit"))
	if err != nil {
		fail(err)
	}

	fmt.Println()
	fmt.Println("| case | pid | anchor | pid / anchor | results pid / anchor |")
	fmt.Println("|---|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Println(r.markdown())
	}
	fmt.Printf("| edit one line of a 50 MB file: peak RSS of a fresh daemon | %s | - | %.1fx the file | - |\n", mem.peak, mem.ratio)
	fmt.Println()
	fmt.Println(mem.detail)
	if len(perFile) > 1 {
		var parts []string
		for _, t := range trees {
			parts = append(parts, fmt.Sprintf("%s %.1f µs", t.name, perFile[t.name]))
		}
		fmt.Printf("pid's per-file cost (grep, no match): %s\n", strings.Join(parts, ", "))
	}
	if progress != "" {
		fmt.Println(progress)
	}
	fmt.Println("load average at the end:", loadavg())
	warned := false
	for _, r := range rows {
		if r.Note != "" {
			if !warned {
				fmt.Println()
				warned = true
			}
			fmt.Printf("WARNING: %s: %s\n", r.Case, r.Note)
		}
	}
	if *jsonOut != "" {
		out := map[string]any{"machine": machine(), "rows": rows, "editPeakRSS": mem.peakBytes, "editPeakRatio": mem.ratio, "perFileMicros": perFile, "progress": progress}
		body, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(*jsonOut, body, 0o644); err != nil {
			fail(err)
		}
	}
}

// bench holds what every case needs.
type bench struct {
	bin, home string
	reps      int
}

// timedRun is one timed run of one side: how long it took and how many results it gave.
type timedRun func() (time.Duration, int, error)

// pair runs pid's side and the anchor's once each to warm up, then reps times each,
// alternating, so that other work on the machine weighs on both alike; it returns the
// median times and the results of the last runs. Every run of a side must give the same
// count.
func (b *bench) pair(pid, anchor timedRun) (pidT time.Duration, pidN int, anchorT time.Duration, anchorN int, err error) {
	sides := []timedRun{pid, anchor}
	times := [2][]time.Duration{}
	counts := [2]int{-1, -1}
	for i := range b.reps + 1 {
		for k, f := range sides {
			d, n, err := f()
			if err != nil {
				return 0, 0, 0, 0, fmt.Errorf("%s: %w", [2]string{"pid", "anchor"}[k], err)
			}
			if i == 0 {
				continue // warm-up
			}
			if counts[k] >= 0 && n != counts[k] {
				return 0, 0, 0, 0, fmt.Errorf("two runs of %s gave %d and %d results", [2]string{"pid", "the anchor"}[k], counts[k], n)
			}
			counts[k] = n
			times[k] = append(times[k], d)
		}
	}
	return median(times[0]), counts[0], median(times[1]), counts[1], nil
}

// median returns the median of ds (the lower middle one for an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// newRow fills a row from the two medians and counts; a difference in counts becomes the
// row's note unless note is set already.
func newRow(name string, pid time.Duration, pidCount int, anchor string, anch time.Duration, anchorCount int, note string) row {
	r := row{Case: name, PidMs: ms(pid), Anchor: anchor, AnchorMs: ms(anch), PidCount: pidCount, AnchorCount: anchorCount, Note: note}
	if anch > 0 {
		r.Ratio = float64(pid) / float64(anch)
	}
	if r.Note == "" && pidCount != anchorCount {
		r.Note = fmt.Sprintf("pid found %d, %s found %d", pidCount, anchor, anchorCount)
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// line is the row as a progress line while the benchmark runs.
func (r row) line() string {
	return fmt.Sprintf("%-50s pid %9.1f ms   %-10s %9.1f ms   %6s   results %d / %d", r.Case, r.PidMs, r.Anchor, r.AnchorMs, fmtRatio(r.Ratio), r.PidCount, r.AnchorCount)
}

// markdown is the row as a line of the final table.
func (r row) markdown() string {
	return fmt.Sprintf("| %s | %s | %s %s | %s | %d / %d |", r.Case, fmtMs(r.PidMs), r.Anchor, fmtMs(r.AnchorMs), fmtRatio(r.Ratio), r.PidCount, r.AnchorCount)
}

// fmtRatio formats pid / anchor: "1.23x", "0.045x".
func fmtRatio(v float64) string {
	if v < 0.1 {
		return fmt.Sprintf("%.3fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}

// fmtMs formats milliseconds for the table: "12.3 ms", "1,234 ms" , "6.52 s".
func fmtMs(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	default:
		return fmt.Sprintf("%.1f ms", v)
	}
}

// grepRow times one grep through pid and through rg on tree t.
func (b *bench) grepRow(d *daemon, sid string, t corpus, g grepCase) (row, error) {
	name := fmt.Sprintf("grep %s, %s `%s`", t.name, g.label, g.pattern)
	truncated := false
	args := []string{"-n", "--no-heading", "--no-messages", "--hidden", "-g", "!.git"}
	if g.ignoreCase {
		args = append(args, "-i")
	}
	args = append(args, "-e", g.pattern, ".")
	pid, pidCount, rg, rgCount, err := b.pair(func() (time.Duration, int, error) {
		res, err := d.execute(sid, "grep", map[string]any{"pattern": g.pattern, "ignoreCase": g.ignoreCase, "limit": 1000})
		if err != nil {
			return 0, 0, err
		}
		truncated = res.details.Get("truncated").Bool()
		return res.elapsed, int(res.details.Get("matches").Int()), nil
	}, func() (time.Duration, int, error) { return countLines(t.dir, "rg", args...) })
	if err != nil {
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	note := ""
	if truncated {
		note = fmt.Sprintf("pid stopped at its limit after %d matches, rg found %d: pick a rarer pattern", pidCount, rgCount)
	}
	return newRow(name, pid, pidCount, "rg", rg, rgCount, note), nil
}

// findRow times find `**/GLOB` through pid and through fd or `rg --files -g` on tree t.
func (b *bench) findRow(d *daemon, sid string, t corpus, anchor string) (row, error) {
	glob := findGlob[t.kind]
	name := fmt.Sprintf("find %s, `**/%s`", t.name, glob)
	truncated := false
	var cmd string
	var args []string
	if anchor == "fd" {
		cmd, args = fdBinary(), []string{"-H", "-E", ".git", "-g", glob}
	} else {
		cmd, args = "rg", []string{"--files", "--hidden", "--no-messages", "-g", "!.git", "-g", glob}
	}
	pid, pidCount, at, atCount, err := b.pair(func() (time.Duration, int, error) {
		res, err := d.execute(sid, "find", map[string]any{"pattern": "**/" + glob, "limit": 10000})
		if err != nil {
			return 0, 0, err
		}
		truncated = res.details.Get("truncated").Bool()
		return res.elapsed, int(res.details.Get("count").Int()), nil
	}, func() (time.Duration, int, error) { return countLines(t.dir, cmd, args...) })
	if err != nil {
		return row{}, fmt.Errorf("%s (against %s): %w", name, anchor, err)
	}
	note := ""
	if truncated {
		note = fmt.Sprintf("pid stopped at its limit of 10,000 paths, %s found %d", anchor, atCount)
	}
	return newRow(name, pid, pidCount, anchor, at, atCount, note), nil
}

// readRow times reading the first 50 lines of the 300 MB file through pid and with sed,
// told to quit at line 50 (a plain `sed -n 1,50p` reads the whole file on).
func (b *bench) readRow(d *daemon, sid, huge string) (row, error) {
	// pid hashes a file changed in the last seconds whole (its stale-edit guard cannot
	// trust the file's times then): let a freshly written file age first.
	if fi, err := os.Stat(huge); err == nil {
		if wait := 4*time.Second - time.Since(fi.ModTime()); wait > 0 {
			time.Sleep(wait)
		}
	}
	pid, pidCount, sed, sedCount, err := b.pair(func() (time.Duration, int, error) {
		res, err := d.execute(sid, "read", map[string]any{"path": filepath.Base(huge), "limit": 50})
		if err != nil {
			return 0, 0, err
		}
		return res.elapsed, int(res.details.Get("endLine").Int()), nil
	}, func() (time.Duration, int, error) {
		return countLines(filepath.Dir(huge), "sed", "-n", "1,50p;50q", filepath.Base(huge))
	})
	if err != nil {
		return row{}, fmt.Errorf("read against sed: %w", err)
	}
	return newRow("read the first 50 lines of a 300 MB file", pid, pidCount, "sed -n '1,50p;50q'", sed, sedCount, ""), nil
}

// millionRows greps the million-file tree once (after a warm-up) through pid and rg, and
// says how often pid's progress updates came.
func (b *bench) millionRows(d *daemon, sid string, t corpus) ([]row, string, error) {
	const pattern = "zqxjv_no_such_text_kw"
	var res toolResult
	pid, pidCount, rg, rgCount, err := (&bench{reps: 1}).pair(func() (time.Duration, int, error) {
		var err error
		res, err = d.execute(sid, "grep", map[string]any{"pattern": pattern, "limit": 1000})
		if err != nil {
			return 0, 0, err
		}
		return res.elapsed, int(res.details.Get("matches").Int()), nil
	}, func() (time.Duration, int, error) {
		return countLines(t.dir, "rg", "-n", "--no-heading", "--no-messages", "--hidden", "-g", "!.git", "-e", pattern, ".")
	})
	if err != nil {
		return nil, "", fmt.Errorf("grep on the million files: %w", err)
	}
	rows := []row{newRow("grep 1,000,001 small files, no match (1 run after a warm-up)", pid, pidCount, "rg", rg, rgCount, "")}
	// The longest wait without news: start to first update, between updates, last to end.
	gaps := make([]time.Duration, 0, len(res.updates)+1)
	prev := res.started
	for _, u := range res.updates {
		gaps = append(gaps, u.Sub(prev))
		prev = u
	}
	gaps = append(gaps, res.started.Add(res.elapsed).Sub(prev))
	progress := fmt.Sprintf("progress on 1,000,001 files: %d $/toolUpdate in %.1f s (%.2f per second); longest wait without one (from the call's start, between two, to its end) %.2f s",
		len(res.updates), res.elapsed.Seconds(), float64(len(res.updates))/res.elapsed.Seconds(), slices.Max(gaps).Seconds())
	return rows, progress, nil
}

// memResult is the edit memory measurement.
type memResult struct {
	peak      string
	peakBytes uint64
	ratio     float64
	detail    string
}

// editMemory edits one line of a 50 MB file in fresh daemons (one per run) and returns the
// median of their peak resident set sizes (VmHWM) after the edit.
func (b *bench) editMemory(dir string) (memResult, error) {
	const size = 50 << 20
	file := filepath.Join(dir, "e50.txt")
	if err := writeBigFile(file, size); err != nil {
		return memResult{}, err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return memResult{}, err
	}
	lineA := strings.TrimSuffix(bigLine(400000), "\n")
	lineB := "EDITED " + lineA
	var peaks, bases []uint64
	var times []time.Duration
	for i := range b.reps + 1 {
		d, err := startDaemon(b.bin, b.home)
		if err != nil {
			return memResult{}, err
		}
		sid, err := d.newSession(dir)
		if err == nil {
			_, err = d.execute(sid, "read", map[string]any{"path": "e50.txt", "limit": 1})
		}
		base := peakRSS(d.pid())
		var res toolResult
		if err == nil {
			old, new := lineA, lineB
			if i%2 == 1 {
				old, new = new, old
			}
			res, err = d.execute(sid, "edit", map[string]any{"path": "e50.txt", "edits": []any{map[string]any{"oldText": old, "newText": new}}})
		}
		peak := peakRSS(d.pid())
		d.stop()
		if err != nil {
			return memResult{}, fmt.Errorf("edit of a 50 MB file: %w", err)
		}
		if i == 0 {
			continue // warm-up: the page cache
		}
		peaks, bases, times = append(peaks, peak), append(bases, base), append(times, res.elapsed)
	}
	slices.Sort(peaks)
	slices.Sort(bases)
	p := peaks[(len(peaks)-1)/2]
	bs := bases[(len(bases)-1)/2]
	return memResult{
		peak:      fmt.Sprintf("%.0f MB", float64(p)/(1<<20)),
		peakBytes: p,
		ratio:     float64(p) / float64(fi.Size()),
		detail: fmt.Sprintf("edit of one line of a %.0f MB file: peak RSS (VmHWM) %.0f MB, %.1fx the file (%.0f MB before the edit, after initialize and a read; the edit itself took %.0f ms), medians of %d fresh daemons",
			float64(fi.Size())/(1<<20), float64(p)/(1<<20), float64(p)/float64(fi.Size()), float64(bs)/(1<<20), ms(median(times)), len(peaks)),
	}, nil
}

// countLines runs name with args in dir, its output read through a pipe, and returns how
// long it took from start to exit and how many lines it printed. Exit status 1 with no
// output is "nothing found" (rg, fd) and not an error.
func countLines(dir, name string, args ...string) (time.Duration, int, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	n := 0
	br := bufio.NewReaderSize(out, 1<<16)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return 0, 0, err
		}
	}
	err = cmd.Wait()
	elapsed := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && n == 0 {
		err = nil
	}
	return elapsed, n, err
}

// machine describes the machine and the tools' versions.
func machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GB RAM", float64(kb)/(1<<20))
		}
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(b))
	}
	version := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			return name + " (version unknown)"
		}
		return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	return fmt.Sprintf("%s UTC; %s, %d cores%s%s; pid built with %s; %s; %s; %s; load average %s",
		time.Now().UTC().Format("2006-01-02 15:04"), cpu, runtime.NumCPU(), mem, kernel, runtime.Version(),
		version("rg", "--version"), version(fdBinary(), "--version"), version("sed", "--version"), loadavg())
}

// loadavg returns the 1, 5 and 15 minute load averages ("?" when unknown): other work on
// the machine shows in the figures.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// vmHWM returns the VmHWM line of a /proc/PID/status text in bytes, or 0 without one.
func vmHWM(status string) uint64 {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
