// Command checkpointbench measures what checkpoints (issue 23) cost, side by side in one run
// on the same machine (see docs/performance.md, "Checkpoints (issue 23)"):
//
//   - the snapshot a bash call takes before its command starts (checkpoint.Session.BeforeBash
//     with a warm stat cache: the cost on the request path), and the one after it (AfterBash),
//     against `git status` on the same tree, alternately; also the first, cold snapshot
//     (what Session.Warm runs in the background) into an empty store and into one that holds
//     the tree's blobs already. The trees are a fresh `git clone` of pid's repository and a
//     copy of Go's source tree committed to a new repository, both under -cache.
//   - W1's workload (200 model calls of 8 calls each to a scripted tool that does nothing)
//     run through session.Prompt in two hosts of this process, one with checkpoints on and
//     one with `{"checkpoints": {"enabled": false}}` in its user settings, alternately; with
//     the checkpoint store empty, and again with it holding the blobs of Go's tree.
//
// Run it with make bench-checkpoints, or:
//
//	go run ./cmd/checkpointbench [-reps 31] [-w1reps 21] [-only snapshot,w1] [-json out.json]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/search"
	"github.com/pid-agent/pid/session"
	"github.com/pid-agent/pid/tools"
)

func main() {
	cache := flag.String("cache", ".cache/checkpointbench", "folder for the trees, stores and settings (created)")
	repo := flag.String("repo", ".", "pid's repository, cloned into -cache")
	gosrc := flag.String("gosrc", "", "Go's source tree, copied into -cache (default: $(go env GOROOT)/src)")
	reps := flag.Int("reps", 31, "snapshot / git status pairs per tree")
	cold := flag.Int("cold", 3, "cold snapshots per tree and store state")
	w1reps := flag.Int("w1reps", 21, "W1 on / off pairs per store state")
	only := flag.String("only", "snapshot,w1", "what to run: snapshot, w1, enforce (the eviction pass alone)")
	trees := flag.String("trees", "pid,go", "trees for the snapshots: pid, go")
	jsonOut := flag.String("json", "", "write the results as JSON to this file")
	flag.BoolVar(&noGit, "nogit", false, "leave git status and the walk alone out of the warm loop (to profile or trace the snapshots)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the warm snapshots to this file (.pid, .go appended)")
	flag.Parse()
	// As the daemon runs (cmd/pid sets GOGC to 400 unless the environment says otherwise).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if err := run(*cache, *repo, *gosrc, *reps, *cold, *w1reps, *only, *trees, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "checkpointbench:", err)
		os.Exit(1)
	}
}

// cpuProfile is -cpuprofile; noGit is -nogit.
var (
	cpuProfile string
	noGit      bool
)

// results is what a run measured.
type results struct {
	Env   map[string]string `json:"env"`
	Trees []treeResult      `json:"trees,omitempty"`
	W1    []w1Result        `json:"w1,omitempty"`
}

func run(cache, repo, gosrc string, reps, cold, w1reps int, only, trees, jsonOut string) error {
	cache, err := filepath.Abs(cache)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	res := results{Env: envInfo()}
	fmt.Printf("checkpointbench: %s, %s, GOMAXPROCS %d, load average %s\n", res.Env["cpu"], runtime.Version(), runtime.GOMAXPROCS(0), res.Env["loadavg"])
	want := func(list, s string) bool { return slices.Contains(strings.Split(list, ","), s) }
	var goTree string
	if want(only, "snapshot") || want(only, "w1") || want(only, "enforce") {
		if goTree, err = goTreeAt(cache, gosrc); err != nil {
			return err
		}
	}
	if want(only, "snapshot") {
		if want(trees, "pid") {
			dir, err := pidTreeAt(cache, repo)
			if err != nil {
				return err
			}
			r, err := benchTree(cache, "pid", dir, reps, cold)
			if err != nil {
				return err
			}
			res.Trees = append(res.Trees, r)
		}
		if want(trees, "go") {
			r, err := benchTree(cache, "go", goTree, reps, cold)
			if err != nil {
				return err
			}
			res.Trees = append(res.Trees, r)
		}
	}
	if want(only, "enforce") {
		if err := benchEnforce(cache, goTree); err != nil {
			return err
		}
	}
	if want(only, "w1") {
		for _, populated := range []bool{false, true} {
			r, err := benchW1(cache, goTree, w1reps, populated)
			if err != nil {
				return err
			}
			res.W1 = append(res.W1, r)
		}
	}
	report(os.Stdout, &res)
	if jsonOut != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(jsonOut, append(data, '\n'), 0o644)
	}
	return nil
}

func envInfo() map[string]string {
	env := map[string]string{"go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH,
		"cores": fmt.Sprint(runtime.NumCPU()), "gomaxprocs": fmt.Sprint(runtime.GOMAXPROCS(0)), "gogc": os.Getenv("GOGC")}
	if env["gogc"] == "" {
		env["gogc"] = "400 (as the daemon)"
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		env["loadavg"] = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				env["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		env["revision"] = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		env["git"] = strings.TrimSpace(string(out))
	}
	return env
}

// sh runs a command in dir, failing with its output.
func sh(dir string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// pidTreeAt returns a fresh clone of pid's repository under cache (made again each run, so
// that it is the repository's HEAD).
func pidTreeAt(cache, repo string) (string, error) {
	dir := filepath.Join(cache, "pid")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	top, err := exec.Command("git", "-C", repo, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository: %v", repo, err)
	}
	return dir, sh(cache, "git", "clone", "-q", strings.TrimSpace(string(top)), dir)
}

// goTreeAt returns a copy of Go's source tree under cache, committed once to a repository
// of its own so that git status has an index (made the first time only).
func goTreeAt(cache, gosrc string) (string, error) {
	dir := filepath.Join(cache, "gosrc")
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err == nil {
		return dir, nil
	}
	if gosrc == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOROOT: %v", err)
		}
		gosrc = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	os.RemoveAll(dir)
	if err := sh(cache, "cp", "-r", gosrc, dir); err != nil {
		return "", err
	}
	for _, c := range [][]string{{"git", "init", "-q"}, {"git", "add", "-A"},
		{"git", "-c", "user.name=checkpointbench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "Go's source tree"}} {
		if err := sh(dir, c...); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// stats are a sample's median, 10th and 90th percentiles, in milliseconds.
type stats struct {
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	N      int     `json:"n"`
}

func statsOf(d []time.Duration) stats {
	if len(d) == 0 {
		return stats{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) float64 {
		return float64(s[int(q*float64(len(s)-1)+0.5)]) / float64(time.Millisecond)
	}
	return stats{Median: at(0.5), P10: at(0.1), P90: at(0.9), N: len(s)}
}

func ratioStats(r []float64) stats {
	s := slices.Clone(r)
	slices.Sort(s)
	at := func(q float64) float64 { return s[int(q*float64(len(s)-1)+0.5)] }
	return stats{Median: at(0.5), P10: at(0.1), P90: at(0.9), N: len(s)}
}

// treeResult is the snapshot figures of one tree.
type treeResult struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Files is how many files a snapshot covers (search.Scan); GitFiles is how many git
	// status looks at (tracked plus untracked not ignored).
	Files    int `json:"files"`
	GitFiles int `json:"gitFiles"`
	// ColdEmpty is the first snapshot into an empty store (every file read and kept);
	// ColdKept into a store that holds the tree's blobs already (every file read, hashed,
	// found kept).
	ColdEmpty stats `json:"coldEmptyStore"`
	ColdKept  stats `json:"coldKeptStore"`
	// Before and After are BeforeBash and AfterBash with a warm stat cache; Scan is the
	// walk alone (search.Scan doing nothing per file), for where the time goes.
	Before    stats `json:"beforeBash"`
	After     stats `json:"afterBash"`
	Scan      stats `json:"scanOnly"`
	GitStatus stats `json:"gitStatus"`
	// Ratio is BeforeBash / git status per pair (alternate pairs run in either order);
	// RatioOfMedians is the medians' ratio.
	Ratio          stats   `json:"ratioPerPair"`
	RatioOfMedians float64 `json:"ratioOfMedians"`
	// The CPU times (user + system, every thread) of BeforeBash and of git status, and
	// their ratio per pair: less sensitive than wall times to other work on the machine.
	BeforeCPU    stats `json:"beforeBashCPU"`
	GitStatusCPU stats `json:"gitStatusCPU"`
	CPURatio     stats `json:"cpuRatioPerPair"`
}

// gitStatus runs git status in dir and returns its wall and CPU (user + system) times.
func gitStatus(dir string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command("git", "status")
	cmd.Dir = dir
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err = cmd.Run()
	wall = time.Since(t0)
	if err != nil {
		return 0, 0, fmt.Errorf("git status in %s: %v: %s", dir, err, stderr.String())
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// gitFiles counts what git status considers: tracked files and untracked ones not ignored.
func gitFiles(dir string) int {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return -1
	}
	return bytes.Count(out, []byte{0})
}

func scanCount(ctx context.Context, ws *tools.Workspace) (int, error) {
	n := 0
	err := search.Scan(ctx, ws, func(search.ScanFile) struct{} { return struct{}{} }, func(string, struct{}) error { n++; return nil })
	return n, err
}

// benchTree measures the snapshots of the tree dir against git status.
func benchTree(cache, name, dir string, reps, cold int) (treeResult, error) {
	ctx := context.Background()
	r := treeResult{Name: name, Dir: dir, GitFiles: gitFiles(dir)}
	ws, err := tools.NewWorkspace(dir, []string{dir})
	if err != nil {
		return r, err
	}
	defer ws.Close()
	if r.Files, err = scanCount(ctx, ws); err != nil {
		return r, err
	}
	stores := filepath.Join(cache, "stores-"+name)
	os.RemoveAll(stores)
	defer os.RemoveAll(stores)
	fmt.Printf("%s tree (%s): %d files in a snapshot, %d for git status\n", name, dir, r.Files, r.GitFiles)

	// Cold: a session's first snapshot, as Warm takes it in the background.
	kept, err := checkpoint.Open(filepath.Join(stores, "kept"), 0)
	if err != nil {
		return r, err
	}
	if _, err := oneSnapshot(ctx, kept, ws, "fill"); err != nil { // the store holds the tree's blobs
		return r, err
	}
	var coldEmpty, coldKept []time.Duration
	for i := range cold {
		st, err := checkpoint.Open(filepath.Join(stores, fmt.Sprint("empty", i)), 0)
		if err != nil {
			return r, err
		}
		for _, c := range []struct {
			st  *checkpoint.Store
			out *[]time.Duration
		}{{st, &coldEmpty}, {kept, &coldKept}} {
			runtime.GC()
			d, err := oneSnapshot(ctx, c.st, ws, fmt.Sprint("cold", i))
			if err != nil {
				return r, err
			}
			*c.out = append(*c.out, d)
		}
		os.RemoveAll(st.Dir())
	}
	r.ColdEmpty, r.ColdKept = statsOf(coldEmpty), statsOf(coldKept)
	fmt.Printf("  cold snapshot: empty store %.1f ms, store holding the blobs %.1f ms (medians of %d)\n", r.ColdEmpty.Median, r.ColdKept.Median, cold)

	// Warm: one session whose stat cache is full, as on every bash call after the first.
	s, err := kept.Session("warm", ws)
	if err != nil {
		return r, err
	}
	defer s.Close()
	if err := s.Begin("warm", "warm"); err != nil {
		return r, err
	}
	s.AfterBash(ctx, s.BeforeBash(ctx))
	for range 3 { // git's index is refreshed once after the clone or copy
		if _, _, err := gitStatus(dir); err != nil {
			return r, err
		}
	}
	var before, after, scan, git, beforeCPU, gitCPU []time.Duration
	var ratios, cpuRatios []float64
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile + "." + name)
		if err != nil {
			return r, err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for i := range reps {
		var b, a, g, sc, bc, gc time.Duration
		snap := func() error {
			c0, t0 := cpuTime(), time.Now()
			sn := s.BeforeBash(ctx)
			b, bc = time.Since(t0), cpuTime()-c0
			if sn == nil {
				return errors.New("BeforeBash returned no snapshot (the checkpoint is not open?)")
			}
			t1 := time.Now()
			s.AfterBash(ctx, sn)
			a = time.Since(t1)
			return nil
		}
		gs := func() (err error) {
			if noGit {
				g, gc = 1, 1
				return nil
			}
			g, gc, err = gitStatus(dir)
			return err
		}
		steps := []func() error{snap, gs}
		if i%2 == 1 {
			steps = []func() error{gs, snap}
		}
		for _, f := range steps {
			if err := f(); err != nil {
				return r, err
			}
		}
		if !noGit {
			t0 := time.Now()
			if _, err := scanCount(ctx, ws); err != nil {
				return r, err
			}
			sc = time.Since(t0)
		}
		before, after, git, scan = append(before, b), append(after, a), append(git, g), append(scan, sc)
		ratios = append(ratios, float64(b)/float64(g))
		beforeCPU, gitCPU = append(beforeCPU, bc), append(gitCPU, gc)
		if gc > 0 {
			cpuRatios = append(cpuRatios, float64(bc)/float64(gc))
		}
	}
	r.Before, r.After, r.Scan, r.GitStatus, r.Ratio = statsOf(before), statsOf(after), statsOf(scan), statsOf(git), ratioStats(ratios)
	r.RatioOfMedians = r.Before.Median / r.GitStatus.Median
	r.BeforeCPU, r.GitStatusCPU, r.CPURatio = statsOf(beforeCPU), statsOf(gitCPU), ratioStats(cpuRatios)

	// The snapshots saw the tree: a file made between BeforeBash and AfterBash is recorded.
	probe := filepath.Join(dir, "checkpointbench-probe.txt")
	sn := s.BeforeBash(ctx)
	if err := os.WriteFile(probe, []byte("probe\n"), 0o644); err != nil {
		return r, err
	}
	s.AfterBash(ctx, sn)
	os.Remove(probe)
	s.End()
	found := false
	for _, c := range s.List() {
		for _, f := range c.Files {
			found = found || (f.Path == probe && f.Change == "added")
		}
	}
	if !found {
		return r, fmt.Errorf("%s: a file made between BeforeBash and AfterBash was not recorded as added", name)
	}
	fmt.Printf("  warm: BeforeBash %.1f ms (p10 %.1f), AfterBash %.1f ms, walk alone %.1f ms, git status %.1f ms (p10 %.1f); BeforeBash/git status per pair: median %.2f, p10 %.2f, p90 %.2f (%d pairs)\n",
		r.Before.Median, r.Before.P10, r.After.Median, r.Scan.Median, r.GitStatus.Median, r.GitStatus.P10, r.Ratio.Median, r.Ratio.P10, r.Ratio.P90, reps)
	fmt.Printf("  CPU time: BeforeBash %.1f ms (p10 %.1f), git status %.1f ms (p10 %.1f); per pair: median %.2f, p10 %.2f, p90 %.2f\n",
		r.BeforeCPU.Median, r.BeforeCPU.P10, r.GitStatusCPU.Median, r.GitStatusCPU.P10, r.CPURatio.Median, r.CPURatio.P10, r.CPURatio.P90)
	return r, nil
}

// oneSnapshot times the first snapshot of a new session of st on ws.
func oneSnapshot(ctx context.Context, st *checkpoint.Store, ws *tools.Workspace, id string) (time.Duration, error) {
	s, err := st.Session(id, ws)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if err := s.Begin(id, id); err != nil {
		return 0, err
	}
	t0 := time.Now()
	sn := s.BeforeBash(ctx)
	d := time.Since(t0)
	if sn == nil {
		return 0, errors.New("BeforeBash returned no snapshot")
	}
	s.AfterBash(ctx, sn)
	return d, nil
}

// benchEnforce times the eviction pass each prompt's end starts in the background
// (Store.Enforce), on a store holding the blobs of Go's tree: what W1 with a full store
// competes with.
func benchEnforce(cache, goTree string) error {
	dir := filepath.Join(cache, "state-enforce")
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	st, err := checkpoint.Open(dir, 0)
	if err != nil {
		return err
	}
	ws, err := tools.NewWorkspace(goTree, []string{goTree})
	if err != nil {
		return err
	}
	_, err = oneSnapshot(context.Background(), st, ws, "populate")
	ws.Close()
	if err != nil {
		return err
	}
	var wall, cpu []time.Duration
	for range 7 {
		c0, t0 := cpuTime(), time.Now()
		if _, err := st.Enforce(); err != nil {
			return err
		}
		wall, cpu = append(wall, time.Since(t0)), append(cpu, cpuTime()-c0)
	}
	w, c := statsOf(wall), statsOf(cpu)
	fmt.Printf("Store.Enforce on a store holding Go's tree (%s): %.1f ms wall (p10 %.1f), %.1f ms CPU (medians of 7)\n", goTree, w.Median, w.P10, c.Median)
	return nil
}

// w1Result is W1 through a session with checkpoints on and off.
type w1Result struct {
	// Store is what the checkpoint store held: "empty" or "Go's tree".
	Store string `json:"store"`
	On    stats  `json:"on"`  // ms per prompt of 1600 calls
	Off   stats  `json:"off"` // ms per prompt of 1600 calls
	// Ratio is on / off per pair (alternate pairs run in either order).
	Ratio          stats   `json:"ratioPerPair"`
	RatioOfMedians float64 `json:"ratioOfMedians"`
}

const w1T, w1K = 200, 8

// quietFace is a face that shows nothing and allows every call.
type quietFace struct{}

func (quietFace) Emit(*session.Session, event.Event) {}
func (quietFace) Ask(context.Context, *session.Session, session.Approval) (session.Answer, error) {
	return session.Answer{}, errors.New("no approvals in the benchmark")
}
func (quietFace) Warn(*session.Session, string) {}
func (quietFace) Elicit(context.Context, *session.Session, session.Elicitation) (session.ElicitAnswer, error) {
	return session.ElicitAnswer{}, errors.New("no elicitation in the benchmark")
}

func w1Turns() []llm.Turn {
	turns := []llm.Turn{{Content: []llm.Content{llm.Text("ready")}}}
	for n := range w1T {
		var calls []llm.Content
		for i := range w1K {
			calls = append(calls, llm.Content{Type: llm.ContentToolCall, ID: fmt.Sprintf("call_%d_%d", n, i), Name: "noop", Arguments: []byte(fmt.Sprintf(`{"i":%d}`, i))})
		}
		turns = append(turns, llm.Turn{Content: calls})
	}
	return append(turns, llm.Turn{Content: []llm.Content{llm.Text("done")}})
}

// newHost returns a host whose user settings are settings (nil: none).
func newHost(cache, name string, settings []byte) (*session.Host, error) {
	cfg := filepath.Join(cache, "config-"+name)
	os.RemoveAll(cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "pid"), 0o700); err != nil {
		return nil, err
	}
	if settings != nil {
		if err := os.WriteFile(filepath.Join(cfg, "pid", "settings.json"), settings, 0o600); err != nil {
			return nil, err
		}
	}
	os.Setenv("XDG_CONFIG_HOME", cfg)
	var problems []string
	h := session.NewHost(session.HostOptions{Report: func(msg string, severe bool) {
		if severe {
			problems = append(problems, msg)
		}
	}})
	h.SetUp(nil)
	if len(problems) > 0 {
		h.Close()
		return nil, fmt.Errorf("host %s: %s", name, strings.Join(problems, "; "))
	}
	return h, nil
}

// promptW1 runs W1 in a new session of h in cwd: a first prompt untimed (so that the
// session file exists and the stat cache was warmed), then W1's prompt, timed. on says
// whether the session must have checkpoints (checked).
func promptW1(h *session.Host, cwd string, turns []llm.Turn, on bool) (time.Duration, error) {
	ctx := context.Background()
	cfg := session.Config{Cwd: cwd, Permissions: []byte(`{"default":"allow"}`), Model: &session.ModelConfig{Provider: "script", Turns: turns},
		ScriptedTools: []session.ScriptedTool{{Name: "noop",
			Parameters: []byte(`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`),
			Steps:      []session.ScriptStep{{Result: &session.ScriptedValue{}}}}}}
	s, err := h.New(cfg, session.Options{Face: quietFace{}})
	if err != nil {
		return 0, err
	}
	defer h.CloseSession(s.ID())
	if _, err := s.Prompt(ctx, []llm.Message{llm.NewUser("ready?")}); err != nil {
		return 0, err
	}
	runtime.GC()
	t0 := time.Now()
	res, err := s.Prompt(ctx, []llm.Message{llm.NewUser("go")})
	d := time.Since(t0)
	if err != nil || res.StopReason != llm.StopEnd || len(res.Messages) != 1+w1T*(1+w1K)+1 {
		return 0, fmt.Errorf("W1: %v, stop %q, %d messages", err, res.StopReason, len(res.Messages))
	}
	cps, err := s.Checkpoints()
	switch {
	case on && (err != nil || len(cps) != 2):
		return 0, fmt.Errorf("W1 with checkpoints on: %d checkpoints (%v), want one per prompt", len(cps), err)
	case !on && err == nil:
		return 0, errors.New("W1 with checkpoints off: the session has checkpoints")
	}
	return d, nil
}

// benchW1 runs W1 with checkpoints on and off, alternately; populated fills the store with
// the blobs of Go's tree first (the end of each prompt starts an eviction pass that looks at
// every blob).
func benchW1(cache, goTree string, reps int, populated bool) (w1Result, error) {
	r := w1Result{Store: "empty"}
	state := filepath.Join(cache, "state-w1")
	os.RemoveAll(state)
	defer os.RemoveAll(state)
	os.Setenv("XDG_STATE_HOME", state)
	cwd := filepath.Join(cache, "w1-workspace")
	os.RemoveAll(cwd)
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		return r, err
	}
	defer os.RemoveAll(cwd)
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(cwd, fmt.Sprintf("file%02d.go", i)), bytes.Repeat([]byte("package w1\n"), 100), 0o644); err != nil {
			return r, err
		}
	}
	if populated {
		r.Store = "Go's tree"
		st, err := checkpoint.Open(filepath.Join(state, "pid", "checkpoints"), 0)
		if err != nil {
			return r, err
		}
		ws, err := tools.NewWorkspace(goTree, []string{goTree})
		if err != nil {
			return r, err
		}
		_, err = oneSnapshot(context.Background(), st, ws, "populate")
		ws.Close()
		if err != nil {
			return r, err
		}
		st.Delete("populate") // its blobs stay until an eviction pass needs the room
	}
	off, err := newHost(cache, "off", []byte(`{"checkpoints": {"enabled": false}}`))
	if err != nil {
		return r, err
	}
	defer off.Close()
	on, err := newHost(cache, "on", nil)
	if err != nil {
		return r, err
	}
	defer on.Close()
	turns := w1Turns()
	for range 2 { // warm-up
		for _, h := range []*session.Host{on, off} {
			if _, err := promptW1(h, cwd, turns, h == on); err != nil {
				return r, err
			}
		}
	}
	var ons, offs []time.Duration
	var ratios []float64
	for i := range reps {
		var dOn, dOff time.Duration
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, isOn := range order {
			h := off
			if isOn {
				h = on
			}
			d, err := promptW1(h, cwd, turns, isOn)
			if err != nil {
				return r, err
			}
			if isOn {
				dOn = d
			} else {
				dOff = d
			}
		}
		ons, offs = append(ons, dOn), append(offs, dOff)
		ratios = append(ratios, float64(dOn)/float64(dOff))
	}
	r.On, r.Off, r.Ratio = statsOf(ons), statsOf(offs), ratioStats(ratios)
	r.RatioOfMedians = r.On.Median / r.Off.Median
	fmt.Printf("W1 through a session, store %s: checkpoints on %.1f ms (p10 %.1f), off %.1f ms (p10 %.1f) per prompt of %d calls; on/off per pair: median %.3f, p10 %.3f, p90 %.3f (%d pairs)\n",
		r.Store, r.On.Median, r.On.P10, r.Off.Median, r.Off.P10, w1T*w1K, r.Ratio.Median, r.Ratio.P10, r.Ratio.P90, reps)
	return r, nil
}

// report prints the figures as the markdown tables of docs/performance.md.
func report(w io.Writer, res *results) {
	fmt.Fprintf(w, "\nMachine: %s, %s cores, %s, %s, load average %s at the start, revision %s\n\n",
		res.Env["cpu"], res.Env["cores"], res.Env["go"], res.Env["git"], res.Env["loadavg"], res.Env["revision"])
	if len(res.Trees) > 0 {
		fmt.Fprintln(w, "| tree | files (snapshot / git) | BeforeBash, warm: median (p10) | AfterBash, warm | walk alone | git status: median (p10) | BeforeBash / git status per pair: median (p10, p90) | CPU time: BeforeBash / git status (per pair: median) | cold: empty store / blobs kept |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, t := range res.Trees {
			fmt.Fprintf(w, "| %s | %d / %d | %.1f ms (%.1f) | %.1f ms | %.1f ms | %.1f ms (%.1f) | **%.2f** (%.2f, %.2f) | %.1f / %.1f ms (%.2f) | %.0f / %.0f ms |\n",
				t.Name, t.Files, t.GitFiles, t.Before.Median, t.Before.P10, t.After.Median, t.Scan.Median, t.GitStatus.Median, t.GitStatus.P10,
				t.Ratio.Median, t.Ratio.P10, t.Ratio.P90, t.BeforeCPU.Median, t.GitStatusCPU.Median, t.CPURatio.Median, t.ColdEmpty.Median, t.ColdKept.Median)
		}
		fmt.Fprintln(w)
	}
	if len(res.W1) > 0 {
		fmt.Fprintln(w, "| W1 through session.Prompt, checkpoint store | on: median (p10) | off: median (p10) | on / off per pair: median (p10, p90) |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, r := range res.W1 {
			fmt.Fprintf(w, "| %s | %.1f ms (%.1f) | %.1f ms (%.1f) | **%.3f** (%.3f, %.3f) |\n",
				r.Store, r.On.Median, r.On.P10, r.Off.Median, r.Off.P10, r.Ratio.Median, r.Ratio.P10, r.Ratio.P90)
		}
	}
}
