// Command pidbench measures the tool-execution overhead of pid's agent loop with the
// workloads of pi's benchmark (shared/bench/pi/bench.mjs), so the two can be compared figure
// for figure. See docs/performance.md.
//
//	go run ./cmd/pidbench                       # full suite
//	go run ./cmd/pidbench -reps 5 -warmup 10 -only W1,W4 -json out.json
//	go run ./cmd/pidbench -compare pi.json pid.json
//
// Like pi's, each workload and mode runs in a fresh child process (this binary re-executed
// with -child): warmup unmeasured runs, then reps measured runs, a GC before each. W5 runs
// every rep in its own process to read the peak RSS. The children collect garbage as the
// daemon does (daemonGOGC) unless GOGC is set in the environment.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// perfDef is a workload of the perf suite (pi's perfDefs).
type perfDef struct {
	ID     string
	Tool   string
	T, K   int
	Hooks  bool
	LLM    string // "" means the -llm flag
	Warmup int    // 0 means 10
}

var perfDefs = []perfDef{
	{ID: "W1", Tool: "noop", T: 200, K: 8},
	{ID: "W1k1", Tool: "noop", T: 200, K: 1},
	{ID: "W2", Tool: "noop", T: 200, K: 8, Hooks: true},
	{ID: "W3", Tool: "update10", T: 200, K: 8},
	{ID: "W4", Tool: "sleep20", T: 20, K: 8, Warmup: 1},
	{ID: "W1-llmfull", Tool: "noop", T: 200, K: 8, LLM: "full"},
	{ID: "W5t", Tool: "noop", T: 2000, K: 8, Warmup: 3},
}

var modes = []string{"parallel", "sequential"}

// The JSON result, shaped like pi's.
type (
	envInfo struct {
		Impl       string `json:"impl"`
		Module     string `json:"module"`
		Revision   string `json:"revision,omitempty"`
		Go         string `json:"go"`
		OS         string `json:"os"`
		CPU        string `json:"cpu"`
		Cores      int    `json:"cores"`
		GOMAXPROCS int    `json:"gomaxprocs"`
		GOGC       string `json:"gogc"`
		Loadavg    string `json:"loadavg"`
		Reps       int    `json:"reps"`
		Warmup     string `json:"warmup"`
		LLM        string `json:"llm"`
		API        string `json:"api"`
		Convert    string `json:"convert"`
	}
	perfRow struct {
		ID                string         `json:"id"`
		Mode              string         `json:"mode"`
		LLM               string         `json:"llm"`
		API               string         `json:"api"`
		T                 int            `json:"T"`
		K                 int            `json:"K"`
		Warmup            int            `json:"warmup"`
		Reps              int            `json:"reps"`
		ToolCalls         int            `json:"toolCalls"`
		LLMCalls          int            `json:"llmCalls"`
		Events            int            `json:"events"`
		Counts            map[string]int `json:"counts"`
		WallMs            summary        `json:"wallMs"`
		PerCallUs         summary        `json:"perCallUs"`
		PerCallFromTurnUs summary        `json:"perCallFromTurnUs"`
		EventsPerSec      summary        `json:"eventsPerSec"`
		TurnMs            summary        `json:"turnMs"`
		Runs              []perfRun      `json:"runs"`
	}
	memRow struct {
		Mode                  string   `json:"mode"`
		T                     int      `json:"T"`
		K                     int      `json:"K"`
		WallMs                summary  `json:"wallMs"`
		MaxRssMB              summary  `json:"maxRssMB"`
		PeakRssSampledMB      summary  `json:"peakRssSampledMB"`
		BaseRssMB             summary  `json:"baseRssMB"`
		HeapRetainedAfterGcMB summary  `json:"heapRetainedAfterGcMB"`
		HeapBeforeMB          summary  `json:"heapBeforeMB"`
		MessagesRetained      int      `json:"messagesRetained"`
		Events                int      `json:"events"`
		Runs                  []memRun `json:"runs"`
	}
	marginal struct {
		FromWall       float64 `json:"fromWall"`
		FromTurnMedian float64 `json:"fromTurnMedian"`
	}
	results struct {
		Env                envInfo   `json:"env"`
		Perf               []perfRow `json:"perf"`
		Mem                []memRow  `json:"mem"`
		MemNote            string    `json:"memNote,omitempty"`
		MarginalParallel   *marginal `json:"marginalPerCallUs_parallel,omitempty"`
		MarginalSequential *marginal `json:"marginalPerCallUs_sequential,omitempty"`
		ConversionNote     string    `json:"conversionNote"`
		LoadavgEnd         string    `json:"loadavgEnd"`
	}
)

func main() {
	reps := flag.Int("reps", 5, "measured runs per workload and mode")
	warmup := flag.Int("warmup", -1, "unmeasured runs before them (default 10; W4: 1, W5t: 3)")
	only := flag.String("only", "W1,W1k1,W2,W3,W4,W1-llmfull,W5t,W5", "comma-separated workloads to run")
	jsonPath := flag.String("json", "", "write the results as JSON to this file")
	llmMode := flag.String("llm", "min", `model: "min" (done-only message) or "full" (streaming steps)`)
	convert := flag.String("convert", "filter", `convertToLlm: "filter" (role filter) or "identity" (none)`)
	compare := flag.Bool("compare", false, "compare two result files: pidbench -compare PI.json PID.json")
	child := flag.String("child", "", "internal: run one child job (perf or mem)")
	specJSON := flag.String("spec", "", "internal: the child's workload")
	flag.Parse()

	if *compare {
		if flag.NArg() != 2 {
			fatalf("usage: pidbench -compare PI.json PID.json")
		}
		if err := runCompare(os.Stdout, flag.Arg(0), flag.Arg(1)); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if *child != "" {
		if err := runChild(*child, *specJSON); err != nil {
			fatalf("child: %v", err)
		}
		return
	}
	if *llmMode != "min" && *llmMode != "full" {
		fatalf("-llm must be min or full")
	}
	if *convert != "filter" && *convert != "identity" {
		fatalf("-convert must be filter or identity")
	}
	if err := orchestrate(*reps, *warmup, strings.Split(*only, ","), *jsonPath, *llmMode, *convert); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "pidbench: "+format+"\n", a...)
	os.Exit(1)
}

// daemonGOGC is the GC target cmd/pid sets when GOGC is not in its environment
// (TestGCTargetIsTheDaemons keeps the two equal): the loop is measured as pid runs it.
const daemonGOGC = 400

// gogc applies the daemon's GC target unless GOGC is set, and returns the one in force.
func gogc() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	debug.SetGCPercent(daemonGOGC)
	return strconv.Itoa(daemonGOGC) + " (pid's daemon)"
}

func runChild(kind, specJSON string) error {
	gogc()
	var s spec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fmt.Errorf("bad -spec: %v", err)
	}
	var out any
	var err error
	switch kind {
	case "perf":
		out, err = childPerf(s)
	case "mem":
		out, err = childMem(s)
	default:
		return fmt.Errorf("unknown child kind %q", kind)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// spawn runs one child job in a fresh process and decodes its JSON into out.
func spawn(kind string, s spec, out any) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	js, _ := json.Marshal(s)
	cmd := exec.Command(exe, "-child", kind, "-spec", string(js))
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("child failed (%s %s): %v", kind, js, err)
	}
	return json.Unmarshal(b, out)
}

func environment(reps, warmup int, llmMode, convert string) envInfo {
	env := envInfo{
		Impl: "pid (Go)", Module: "github.com/pid-agent/pid", Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, CPU: cpuModel(), Cores: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GOGC: gogc(), Loadavg: loadavg(),
		Reps: reps, Warmup: "10 (W4: 1, W5t: 3)", LLM: llmMode, API: "loop.Run", Convert: convert,
	}
	if warmup >= 0 {
		env.Warmup = strconv.Itoa(warmup)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				env.Revision = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				env.Revision += "+dirty"
			}
		}
	}
	return env
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

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

func orchestrate(reps, warmup int, only []string, jsonPath, llmMode, convert string) error {
	env := environment(reps, warmup, llmMode, convert)
	fmt.Println("# pid agent-loop tool-execution benchmark")
	fmt.Printf("impl=%s  go=%s  os=%s  cpu=%s  cores=%d  gomaxprocs=%d  gogc=%s  loadavg=%s  reps=%d  warmup=%s  llm=%s  api=%s  convert=%s\n",
		env.Impl, env.Go, env.OS, env.CPU, env.Cores, env.GOMAXPROCS, env.GOGC, env.Loadavg, env.Reps, env.Warmup, env.LLM, env.API, env.Convert)

	res := results{
		Env: env,
		ConversionNote: "convertToLlm is the same role filter as pi's, but pid applies it once per message as the message enters " +
			"the transcript (linear in the run), where pi re-filters the whole context before every model call (quadratic)",
	}
	for _, d := range perfDefs {
		if !slices.Contains(only, d.ID) {
			continue
		}
		for _, mode := range modes {
			s := spec{ID: d.ID, Tool: d.Tool, T: d.T, K: d.K, Mode: mode, Hooks: d.Hooks, LLM: llmMode, Convert: convert, Reps: reps, Warmup: 10}
			if d.LLM != "" {
				s.LLM = d.LLM
			}
			if d.Warmup > 0 {
				s.Warmup = d.Warmup
			}
			if warmup >= 0 {
				s.Warmup = warmup
			}
			var runs []perfRun
			if err := spawn("perf", s, &runs); err != nil {
				return err
			}
			if len(runs) == 0 {
				return fmt.Errorf("%s %s: no measured runs (reps=%d)", d.ID, mode, reps)
			}
			row := perfRowOf(s, runs)
			res.Perf = append(res.Perf, row)
			printPerf(row)
		}
	}
	for _, mode := range modes {
		a, b := findRow(res.Perf, "W1", mode), findRow(res.Perf, "W1k1", mode)
		if a == nil || b == nil {
			continue
		}
		m := &marginal{
			FromWall:       (a.WallMs.Median - b.WallMs.Median) * 1000 / float64(a.T*(a.K-b.K)),
			FromTurnMedian: (a.TurnMs.Median - b.TurnMs.Median) * 1000 / float64(a.K-b.K),
		}
		if mode == "parallel" {
			res.MarginalParallel = m
		} else {
			res.MarginalSequential = m
		}
		fmt.Printf("marginal per-tool-call cost (%s): (wall W1 - wall W1k1)/(T*7) = %.2f us; (turn W1 - turn W1k1)/7 = %.2f us\n", mode, m.FromWall, m.FromTurnMedian)
	}
	if slices.Contains(only, "W5") {
		res.MemNote = "each rep = fresh process; one T=20 warm-up run, runtime.GC(), baseline RSS, measured T=2000 run " +
			"(RSS sampled from /proc/self/statm at every TurnEnd); maxRSS = getrusage ru_maxrss (kernel peak, whole process lifetime)"
		for _, mode := range modes {
			s := spec{ID: "W5", Tool: "noop", T: 2000, K: 8, Mode: mode, LLM: llmMode, Convert: convert}
			var runs []memRun
			for i := 0; i < reps; i++ {
				var r memRun
				if err := spawn("mem", s, &r); err != nil {
					return err
				}
				runs = append(runs, r)
			}
			if len(runs) == 0 {
				return fmt.Errorf("W5 %s: no measured runs (reps=%d)", mode, reps)
			}
			row := memRowOf(mode, runs)
			res.Mem = append(res.Mem, row)
			f := func(x summary) string { return fmt.Sprintf("%.1f [%.1f..%.1f]", x.Median, x.Min, x.Max) }
			fmt.Printf("W5    %-10s T=2000 K=8 wall_ms=%s maxRSS_MB=%s sampledPeakRSS_MB=%s baseRSS_MB=%s heap_before_MB=%s heap_retained_MB=%s msgs=%d\n",
				mode, f(row.WallMs), f(row.MaxRssMB), f(row.PeakRssSampledMB), f(row.BaseRssMB), f(row.HeapBeforeMB), f(row.HeapRetainedAfterGcMB), row.MessagesRetained)
		}
	}
	res.LoadavgEnd = loadavg()
	fmt.Printf("loadavg at end=%s\n", res.LoadavgEnd)
	if jsonPath != "" {
		if dir := filepath.Dir(jsonPath); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nresults written to %s\n", jsonPath)
	}
	return nil
}

func perfRowOf(s spec, runs []perfRun) perfRow {
	col := func(f func(r perfRun) float64) summary {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return summarize(v)
	}
	return perfRow{
		ID: s.ID, Mode: s.Mode, LLM: s.LLM, API: "loop.Run", T: s.T, K: s.K, Warmup: s.Warmup, Reps: s.Reps,
		ToolCalls: runs[0].ToolCalls, LLMCalls: runs[0].LLMCalls, Events: runs[0].Events, Counts: runs[0].Counts,
		WallMs:            col(func(r perfRun) float64 { return r.WallMs }),
		PerCallUs:         col(func(r perfRun) float64 { return r.WallMs * 1000 / float64(r.ToolCalls) }),
		PerCallFromTurnUs: col(func(r perfRun) float64 { return r.TurnMedianMs * 1000 / float64(s.K) }),
		EventsPerSec:      col(func(r perfRun) float64 { return float64(r.Events) / (r.WallMs / 1000) }),
		TurnMs:            col(func(r perfRun) float64 { return r.TurnMedianMs }),
		Runs:              runs,
	}
}

func memRowOf(mode string, runs []memRun) memRow {
	col := func(f func(r memRun) float64) summary {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return summarize(v)
	}
	return memRow{
		Mode: mode, T: 2000, K: 8,
		WallMs:                col(func(r memRun) float64 { return r.WallMs }),
		MaxRssMB:              col(func(r memRun) float64 { return r.MaxRssMB }),
		PeakRssSampledMB:      col(func(r memRun) float64 { return r.PeakRssSampledMB }),
		BaseRssMB:             col(func(r memRun) float64 { return r.BaseRssMB }),
		HeapRetainedAfterGcMB: col(func(r memRun) float64 { return r.HeapRetainedAfterGcMB }),
		HeapBeforeMB:          col(func(r memRun) float64 { return r.HeapBeforeMB }),
		MessagesRetained:      runs[0].MessagesRetained, Events: runs[0].Events, Runs: runs,
	}
}

func findRow(rows []perfRow, id, mode string) *perfRow {
	for i := range rows {
		if rows[i].ID == id && rows[i].Mode == mode {
			return &rows[i]
		}
	}
	return nil
}

func printPerf(r perfRow) {
	f := func(s summary, d int) string {
		return fmt.Sprintf("%.*f [%.*f..%.*f]", d, s.Median, d, s.Min, d, s.Max)
	}
	fmt.Printf("%-12s %-10s wall_ms=%s  per_call_us=%s  turn_ms=%s  (turn/K_us=%.1f)  events=%d  ev/s=%s\n",
		r.ID, r.Mode, f(r.WallMs, 2), f(r.PerCallUs, 2), f(r.TurnMs, 3), r.PerCallFromTurnUs.Median, r.Events, f(r.EventsPerSec, 0))
	var parts []string
	for _, name := range evNames {
		if n, ok := r.Counts[name]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", name, n))
		}
	}
	fmt.Printf("%-12s %-10s counts %s\n", "", "", strings.Join(parts, " "))
}
