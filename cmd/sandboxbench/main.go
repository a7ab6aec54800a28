// Command sandboxbench measures what the sandbox adds to a bash call on the real daemon: it
// starts pid, opens two sessions (the default sandbox, and "sandbox": {"mode": "off"}), runs
// `echo hi` through tools/execute in each, alternately, and prints the median and 90th
// percentile of the round trips, and the median difference; and the CPU time each call cost
// pid and the processes it waited for (user and system, from /proc/PID/stat), which a busy
// machine changes far less than the round trip: on a quiet machine the round trip is about
// that. docs/performance.md quotes it. It speaks to pid through internal/pidtest.
//
//	make build && go run ./cmd/sandboxbench -pid bin/pid -n 200
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pid-agent/pid/internal/pidtest"
)

func main() {
	pidPath := flag.String("pid", "bin/pid", "the pid binary")
	n := flag.Int("n", 200, "calls per session")
	command := flag.String("command", "echo hi", "the bash command")
	box := flag.String("sandbox", "", `the sandboxed session's "sandbox" settings (JSON); default: none (the default sandbox)`)
	gap := flag.Duration("gap", 0, "a pause before each call, as a model's turn between two (pid starts the next sandboxed call's helper after a call)")
	flag.Parse()
	var sb any
	if *box != "" {
		if err := json.Unmarshal([]byte(*box), &sb); err != nil {
			fmt.Fprintln(os.Stderr, "sandboxbench: -sandbox:", err)
			os.Exit(2)
		}
	}
	if err := run(*pidPath, *n, *command, sb, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

func run(pidPath string, n int, command string, box any, gap time.Duration) error {
	c, err := pidtest.Start(pidPath, pidtest.Options{Stderr: os.Stderr, Conn: pidtest.ConnOptions{Discard: true, HangGuard: time.Minute}})
	if err != nil {
		return err
	}
	defer c.Stop(10 * time.Second)
	cwd, _ := os.Getwd()
	init, err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + cwd, "capabilities": map[string]any{}})
	if err != nil {
		return err
	}
	fmt.Printf("sandbox capability: %s\n", init.Get("capabilities.experimental.pid.sandbox").Raw)
	perms := map[string]any{"tools": map[string]any{"bash": "allow"}}
	var ids [2]string
	for i, sb := range []any{box, map[string]any{"mode": "off"}} {
		p := map[string]any{"permissions": perms}
		if sb != nil {
			p["sandbox"] = sb
		}
		res, err := c.Call("session/new", p)
		if err != nil {
			return err
		}
		ids[i] = res.Get("sessionId").String()
	}
	var times, cpus [2][]time.Duration
	var mode [2]string
	for k := range n + 5 {
		for i, id := range ids {
			if gap > 0 {
				time.Sleep(gap)
			}
			cpu0 := cpuTime(c.Pid())
			began := time.Now()
			res, err := c.Call("tools/execute", map[string]any{"sessionId": id, "toolCalls": []any{map[string]any{"id": "c", "name": "bash", "arguments": map[string]any{"command": command}}}})
			took := time.Since(began)
			cpu := cpuTime(c.Pid()) - cpu0
			if err != nil {
				return err
			}
			if msgs := res.Get("messages").Array(); len(msgs) != 1 || msgs[0].Get("isError").Bool() {
				return fmt.Errorf("tools/execute: %s", res.Raw)
			}
			mode[i] = res.Get("messages.0.details.sandbox.mode").String()
			if k >= 5 { // the first calls warm up
				times[i] = append(times[i], took)
				cpus[i] = append(cpus[i], cpu)
			}
		}
	}
	med := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1))]
	}
	for i := range ids {
		fmt.Printf("%-16s n=%d  median %6.2f ms  p90 %6.2f ms\n", mode[i], len(times[i]), ms(med(times[i], 0.5)), ms(med(times[i], 0.9)))
	}
	diffs := make([]time.Duration, len(times[0]))
	for k := range diffs {
		diffs[k] = times[0][k] - times[1][k]
	}
	fmt.Printf("added by the sandbox: median of paired differences %.2f ms; difference of medians %.2f ms\n",
		ms(med(diffs, 0.5)), ms(med(times[0], 0.5)-med(times[1], 0.5)))
	// The clock ticks are 10 ms: the mean over every call, not a median.
	mean := func(d []time.Duration) time.Duration {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return sum / time.Duration(len(d))
	}
	fmt.Printf("CPU per call, mean (pid and what it waited for): %s %.2f ms, %s %.2f ms, added %.2f ms\n",
		mode[0], ms(mean(cpus[0])), mode[1], ms(mean(cpus[1])), ms(mean(cpus[0])-mean(cpus[1])))
	return nil
}

// cpuTime returns the CPU time (user and system) of process pid and of the children it
// has waited for, from /proc/PID/stat; 0 when it cannot be read.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command's name (in parentheses, which may hold spaces): utime is
	// the 14th field of the line, stime, cutime and cstime the next three, in clock ticks.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} {
		if i < len(f) {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += v
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
