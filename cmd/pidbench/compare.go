// This file compares a pi result file (bench.mjs --json) with a pidbench one.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// The fields both result files share. Anything else in them is ignored.
type (
	cmpSummary struct {
		Median float64 `json:"median"`
		Min    float64 `json:"min"`
		Max    float64 `json:"max"`
	}
	cmpPerf struct {
		ID        string     `json:"id"`
		Mode      string     `json:"mode"`
		LLM       string     `json:"llm"`
		API       string     `json:"api"`
		T         int        `json:"T"`
		K         int        `json:"K"`
		Events    int        `json:"events"`
		WallMs    cmpSummary `json:"wallMs"`
		PerCallUs cmpSummary `json:"perCallUs"`
		TurnMs    cmpSummary `json:"turnMs"`
	}
	cmpMem struct {
		Mode             string     `json:"mode"`
		MaxRssMB         cmpSummary `json:"maxRssMB"`
		PeakRssSampledMB cmpSummary `json:"peakRssSampledMB"`
		BaseRssMB        cmpSummary `json:"baseRssMB"`
	}
	cmpMarginal struct {
		FromWall       float64 `json:"fromWall"`
		FromTurnMedian float64 `json:"fromTurnMedian"`
	}
	cmpFile struct {
		Env                map[string]any `json:"env"`
		LoadavgEnd         string         `json:"loadavgEnd"`
		Perf               []cmpPerf      `json:"perf"`
		Mem                []cmpMem       `json:"mem"`
		MarginalParallel   *cmpMarginal   `json:"marginalPerCallUs_parallel"`
		MarginalSequential *cmpMarginal   `json:"marginalPerCallUs_sequential"`
	}
)

func (f *cmpFile) perf(id, mode string) *cmpPerf {
	for i := range f.Perf {
		// pi's W1-agentLoop variant has no pid counterpart; the ids keep them apart.
		if f.Perf[i].ID == id && f.Perf[i].Mode == mode {
			return &f.Perf[i]
		}
	}
	return nil
}

func (f *cmpFile) mem(mode string) *cmpMem {
	for i := range f.Mem {
		if f.Mem[i].Mode == mode {
			return &f.Mem[i]
		}
	}
	return nil
}

func (f *cmpFile) marginal(mode string) *cmpMarginal {
	if mode == "parallel" {
		return f.MarginalParallel
	}
	return f.MarginalSequential
}

func readResults(path string) (*cmpFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f cmpFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &f, nil
}

// ratioWorkloads are the workloads with a "pi/pid per-call ratio" line, in order.
var ratioWorkloads = []string{"W1", "W1k1", "W2", "W3", "W4", "W5t"}

// Targets of issue 2.
const (
	targetPerCallRatio = 10.0 // pid's per-tool-call overhead at least 10x lower than pi's
	targetScaling      = 1.3  // pid's per-call cost at T=2000 within 1.3x of T=200
	targetW4OverMs     = 1.0  // W4 parallel turn within 1 ms of the 20 ms sleep
	targetRSSRatio     = 3.0  // W5 peak RSS under a third of pi's
	sleepMs            = 20.0
)

func runCompare(w io.Writer, piPath, pidPath string) error {
	pi, err := readResults(piPath)
	if err != nil {
		return err
	}
	pid, err := readResults(pidPath)
	if err != nil {
		return err
	}
	env := func(f *cmpFile, keys ...string) string {
		var parts []string
		for _, k := range keys {
			if v, ok := f.Env[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
		return strings.Join(parts, " ")
	}
	fmt.Fprintf(w, "# pi vs pid: tool-execution overhead of the agent loop\n")
	fmt.Fprintf(w, "pi:  %s  (%s)\n", env(pi, "impl", "@mariozechner/pi-agent-core", "node", "reps", "llm", "convert"), piPath)
	fmt.Fprintf(w, "pid: %s  (%s)\n", env(pid, "impl", "go", "gogc", "revision", "reps", "llm", "convert"), pidPath)
	fmt.Fprintf(w, "machine: cpu=%v cores=%v; loadavg at start: pi %v, pid %v; at end: pid %s\n\n",
		pid.Env["cpu"], pid.Env["cores"], pi.Env["loadavg"], pid.Env["loadavg"], pid.LoadavgEnd)

	fmt.Fprintf(w, "%-11s %-10s %6s %3s | %13s %13s %8s | %11s %11s %8s\n",
		"workload", "mode", "T", "K", "pi us/call", "pid us/call", "pi/pid", "pi turn_ms", "pid turn_ms", "pi/pid")
	ids := []string{"W1", "W1k1", "W2", "W3", "W4", "W1-llmfull", "W5t"}
	for _, id := range ids {
		for _, mode := range modes {
			a, b := pi.perf(id, mode), pid.perf(id, mode)
			if a == nil && b == nil {
				continue
			}
			if a == nil || b == nil {
				fmt.Fprintf(w, "%-11s %-10s  (only in %s)\n", id, mode, map[bool]string{true: "pid", false: "pi"}[a == nil])
				continue
			}
			fmt.Fprintf(w, "%-11s %-10s %6d %3d | %13.2f %13.2f %8s | %11.3f %11.3f %8s\n",
				id, mode, b.T, b.K, a.PerCallUs.Median, b.PerCallUs.Median, ratio(a.PerCallUs.Median, b.PerCallUs.Median),
				a.TurnMs.Median, b.TurnMs.Median, ratio(a.TurnMs.Median, b.TurnMs.Median))
		}
	}
	fmt.Fprintln(w)
	for _, mode := range modes {
		a, b := pi.marginal(mode), pid.marginal(mode)
		if a == nil || b == nil {
			continue
		}
		fmt.Fprintf(w, "marginal per-call cost (%s, from wall): pi %.2f us, pid %.2f us, pi/pid %s; (from turn medians): pi %.2f us, pid %.2f us, pi/pid %s\n",
			mode, a.FromWall, b.FromWall, ratio(a.FromWall, b.FromWall), a.FromTurnMedian, b.FromTurnMedian, ratio(a.FromTurnMedian, b.FromTurnMedian))
	}
	for _, mode := range modes {
		a, b := pi.mem(mode), pid.mem(mode)
		if a == nil || b == nil {
			continue
		}
		fmt.Fprintf(w, "W5 %-10s maxRSS_MB: pi %.1f, pid %.1f, pi/pid %s; baseline RSS_MB: pi %.1f, pid %.1f; growth over baseline MB: pi %.1f, pid %.1f, pi/pid %s\n",
			mode, a.MaxRssMB.Median, b.MaxRssMB.Median, ratio(a.MaxRssMB.Median, b.MaxRssMB.Median),
			a.BaseRssMB.Median, b.BaseRssMB.Median,
			a.MaxRssMB.Median-a.BaseRssMB.Median, b.MaxRssMB.Median-b.BaseRssMB.Median,
			ratio(a.MaxRssMB.Median-a.BaseRssMB.Median, b.MaxRssMB.Median-b.BaseRssMB.Median))
	}

	fmt.Fprintf(w, "\ntargets (issue 2):\n")
	targets := 0
	verdict := func(ok bool) string {
		targets++
		if ok {
			return "met   "
		}
		return "MISSED"
	}
	{
		var parts []string
		met, known := true, false
		for _, mode := range modes {
			a, b := pi.perf("W1", mode), pid.perf("W1", mode)
			if a == nil || b == nil || b.PerCallUs.Median <= 0 {
				continue
			}
			r := a.PerCallUs.Median / b.PerCallUs.Median
			known = true
			met = met && r >= targetPerCallRatio
			parts = append(parts, fmt.Sprintf("W1 %s %.1fx", mode, r))
		}
		for _, mode := range modes {
			a, b := pi.marginal(mode), pid.marginal(mode)
			if a != nil && b != nil && b.FromWall > 0 {
				parts = append(parts, fmt.Sprintf("marginal %s %.1fx", mode, a.FromWall/b.FromWall))
			}
		}
		if known {
			fmt.Fprintf(w, "  [%s] per-tool-call overhead >= %.0fx lower than pi (%s)\n", verdict(met), targetPerCallRatio, strings.Join(parts, ", "))
		}
	}
	if s, ok := scaling(pid); ok {
		fmt.Fprintf(w, "  [%s] pid per-call at T=2000 within %.1fx of T=200 (W5t/W1 parallel: %.2fx)\n", verdict(s <= targetScaling), targetScaling, s)
	}
	if b := pid.perf("W4", "parallel"); b != nil {
		over := b.TurnMs.Median - sleepMs
		fmt.Fprintf(w, "  [%s] W4 parallel turn within %.0f ms of the %.0f ms sleep (+%.3f ms)\n", verdict(over <= targetW4OverMs), targetW4OverMs, sleepMs, over)
	}
	if a, b := pi.mem("parallel"), pid.mem("parallel"); a != nil && b != nil && b.MaxRssMB.Median > 0 {
		r := a.MaxRssMB.Median / b.MaxRssMB.Median
		fmt.Fprintf(w, "  [%s] W5 peak RSS under 1/%.0f of pi's (pi %.1f MB, pid %.1f MB: %.1fx)\n", verdict(r > targetRSSRatio), targetRSSRatio, a.MaxRssMB.Median, b.MaxRssMB.Median, r)
	}

	if targets == 0 {
		fmt.Fprintf(w, "  (neither file has the figures any target needs)\n")
	}

	fmt.Fprintln(w)
	for _, id := range ratioWorkloads {
		a, b := pi.perf(id, "parallel"), pid.perf(id, "parallel")
		if a == nil || b == nil {
			fmt.Fprintf(w, "%s pi/pid per-call ratio: n/a (%s)\n", id, missing(a == nil, b == nil))
			continue
		}
		fmt.Fprintf(w, "%s pi/pid per-call ratio: %s\n", id, ratio(a.PerCallUs.Median, b.PerCallUs.Median))
	}
	if a, b := pi.mem("parallel"), pid.mem("parallel"); a != nil && b != nil {
		fmt.Fprintf(w, "W5 pi/pid peak-RSS ratio: %s\n", ratio(a.MaxRssMB.Median, b.MaxRssMB.Median))
	} else {
		fmt.Fprintf(w, "W5 pi/pid peak-RSS ratio: n/a (%s)\n", missing(a == nil, b == nil))
	}
	sPi, okPi := scaling(pi)
	sPid, okPid := scaling(pid)
	fmt.Fprintf(w, "T=2000/T=200 per-call cost ratio (W5t/W1, parallel): pi %s, pid %s\n", fmtOpt(sPi, okPi, 2), fmtOpt(sPid, okPid, 2))
	var oPi, oPid float64
	a, b := pi.perf("W4", "parallel"), pid.perf("W4", "parallel")
	if a != nil {
		oPi = a.TurnMs.Median - sleepMs
	}
	if b != nil {
		oPid = b.TurnMs.Median - sleepMs
	}
	fmt.Fprintf(w, "W4 parallel turn_ms - 20 ms: pi %s ms, pid %s ms\n", fmtOpt(oPi, a != nil, 3), fmtOpt(oPid, b != nil, 3))
	return nil
}

// scaling is per-call cost at T=2000 (W5t) over T=200 (W1), parallel mode.
func scaling(f *cmpFile) (float64, bool) {
	a, b := f.perf("W5t", "parallel"), f.perf("W1", "parallel")
	if a == nil || b == nil || b.PerCallUs.Median <= 0 {
		return 0, false
	}
	return a.PerCallUs.Median / b.PerCallUs.Median, true
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	r := a / b
	if r >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

func fmtOpt(v float64, ok bool, digits int) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", digits, v)
}

func missing(pi, pid bool) string {
	switch {
	case pi && pid:
		return "missing in both files"
	case pi:
		return "missing in the pi file"
	default:
		return "missing in the pid file"
	}
}
