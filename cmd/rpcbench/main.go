// Command rpcbench measures the pid daemon over a real child process's stdio, and runs
// ../shared/bench/rawpipe (the floor: the same framing between two processes with no JSON
// work) in the same run so the two can be compared.
//
//	go run ./cmd/rpcbench [-pid bin/pid] [-rawpipe ../shared/bench/rawpipe] [-json out.json]
//
// It prints three figures for pid and their ratio to the raw pipe:
//   - approval round trip: from the client receiving beforeToolCall to it receiving that
//     call's toolEnd, the client answering at once (pid reads the answer, runs the tool,
//     sends toolEnd): one framed round trip plus pid's JSON and pipeline work;
//   - notification rate: $/toolUpdate and toolEnd notifications a client receives per second
//     from tools that report progress as fast as they can;
//   - start to initialize: from starting the process to the initialize response;
//   - an MCP tool call (pidtestmcp's echo) through pid against the SDK's client calling it
//     directly, and pid's own part (a scripted tool) to tell the MCP leg apart.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

func main() {
	bin := flag.String("pid", "bin/pid", "pid binary")
	raw := flag.String("rawpipe", "../shared/bench/rawpipe", "folder of the rawpipe benchmark (empty: skip)")
	approvals := flag.Int("approvals", 5000, "approval round trips to time")
	updates := flag.Int("updates", 200000, "notifications to time")
	starts := flag.Int("starts", 30, "process starts to time")
	mcpCalls := flag.Int("mcp", 2000, "MCP echo calls to time each way (0: skip)")
	jsonOut := flag.String("json", "", "also write the figures as JSON to this file")
	flag.Parse()

	res := map[string]float64{}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "rpcbench:", err)
		os.Exit(1)
	}
	if *raw != "" {
		rt, rate, err := rawpipe(*raw)
		if err != nil {
			fail(err)
		}
		res["raw_roundtrip_median_us"], res["raw_msgs_per_s"] = rt, rate
		fmt.Printf("rawpipe: round trip median %.1f us, one-way %.0f msgs/s\n", rt, rate)
	}
	med, p10, p90, err := approvalRoundTrip(*bin, *approvals)
	if err != nil {
		fail(err)
	}
	res["approval_roundtrip_median_us"], res["approval_roundtrip_p10_us"], res["approval_roundtrip_p90_us"] = med, p10, p90
	fmt.Printf("pid approval round trip: median %.1f us, p10 %.1f us, p90 %.1f us (%d approvals)\n", med, p10, p90, *approvals)

	rate, n, err := notificationRate(*bin, *updates)
	if err != nil {
		fail(err)
	}
	res["notifications_per_s"] = rate
	fmt.Printf("pid notifications: %.0f msgs/s (%d $/toolUpdate and toolEnd received)\n", rate, n)

	smed, smin, smax, err := startToInitialize(*bin, *starts)
	if err != nil {
		fail(err)
	}
	res["start_to_initialize_median_ms"], res["start_to_initialize_min_ms"], res["start_to_initialize_max_ms"] = smed, smin, smax
	fmt.Printf("pid start to initialize response: median %.2f ms [%.2f..%.2f] (%d starts)\n", smed, smin, smax, *starts)

	if rt := res["raw_roundtrip_median_us"]; rt > 0 {
		res["approval_vs_raw_ratio"] = med / rt
		res["notifications_vs_raw_ratio"] = rate / res["raw_msgs_per_s"]
		fmt.Printf("approval round trip / raw round trip: %.2f (target <= 2, issue 15)\n", med/rt)
		fmt.Printf("notification rate / raw one-way rate: %.2f (target: >= 100000 msgs/s absolute)\n", rate/res["raw_msgs_per_s"])
	}
	fmt.Printf("start to initialize: %.2f ms (target <= 20 ms)\n", smed)

	if *mcpCalls > 0 {
		f, err := mcpRoundTrip(*bin, *mcpCalls)
		if err != nil {
			fail(err)
		}
		res["mcp_direct_median_us"], res["mcp_via_pid_median_us"], res["mcp_pid_noop_median_us"] = f.direct, f.viaPID, f.pidNoop
		res["mcp_via_pid_vs_direct_ratio"] = f.viaPID / f.direct
		res["mcp_part_vs_direct_ratio"] = (f.viaPID - f.pidNoop) / f.direct
		fmt.Printf("MCP echo: SDK client direct %.1f us; through pid (tools/execute) %.1f us; pid with a scripted tool %.1f us (medians, %d calls each)\n",
			f.direct, f.viaPID, f.pidNoop, *mcpCalls)
		fmt.Printf("MCP through pid / direct: %.2f; pid's MCP leg (through pid - scripted tool) / direct: %.2f (target <= 1.2)\n",
			f.viaPID/f.direct, (f.viaPID-f.pidNoop)/f.direct)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fail(err)
		}
	}
}

var (
	rawRT   = regexp.MustCompile(`round trip between processes: median ([0-9.]+) us`)
	rawRate = regexp.MustCompile(`one-way framed messages through an echoing child: ([0-9.]+) msgs/s`)
)

// rawpipe builds and runs the floor benchmark and parses its two figures.
func rawpipe(dir string) (rtUS, rate float64, err error) {
	exe := os.TempDir() + "/pid-rawpipe"
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("building rawpipe in %s: %v\n%s", dir, err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("running rawpipe: %v", err)
	}
	m1, m2 := rawRT.FindSubmatch(out), rawRate.FindSubmatch(out)
	if m1 == nil || m2 == nil {
		return 0, 0, fmt.Errorf("unexpected rawpipe output:\n%s", out)
	}
	rtUS, _ = strconv.ParseFloat(string(m1[1]), 64)
	rate, _ = strconv.ParseFloat(string(m2[1]), 64)
	return rtUS, rate, nil
}

// peer is the client side of one pid process.
type peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	w   *bufio.Writer
	r   *bufio.Reader
}

func start(bin string) (*peer, error) {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &peer{cmd: cmd, in: in, w: bufio.NewWriter(in), r: bufio.NewReaderSize(out, 1<<16)}, nil
}

func (p *peer) send(body []byte) error {
	fmt.Fprintf(p.w, "Content-Length: %d\r\n\r\n", len(body))
	p.w.Write(body)
	return p.w.Flush()
}

func (p *peer) sendJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return p.send(b)
}

func (p *peer) read() ([]byte, error) {
	n := -1
	for {
		line, err := p.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			break
		}
		if v, ok := strings.CutPrefix(s, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	b := make([]byte, n)
	_, err := io.ReadFull(p.r, b)
	return b, err
}

// until reads messages until one has the given id, answering nothing.
func (p *peer) until(id int) ([]byte, error) {
	for {
		b, err := p.read()
		if err != nil {
			return nil, err
		}
		if v := gjson.GetBytes(b, "id"); v.Exists() && !gjson.GetBytes(b, "method").Exists() && v.Int() == int64(id) {
			if e := gjson.GetBytes(b, "error"); e.Exists() {
				return nil, fmt.Errorf("error response: %s", e.Raw)
			}
			return b, nil
		}
	}
}

func (p *peer) stop() {
	p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 999999, "method": "shutdown"})
	p.until(999999)
	p.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	p.in.Close()
	p.cmd.Wait()
}

func (p *peer) init(before bool, sessionParams map[string]any) (string, error) {
	caps := map[string]any{}
	if before {
		caps = map[string]any{"experimental": map[string]any{"pid": map[string]any{"beforeToolCall": true}}}
	}
	p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"capabilities": caps}})
	if _, err := p.until(1); err != nil {
		return "", err
	}
	p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": sessionParams})
	b, err := p.until(2)
	if err != nil {
		return "", err
	}
	return gjson.GetBytes(b, "result.sessionId").String(), nil
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// approvalRoundTrip runs sequential batches of calls to a tool that needs approval and
// times, for each call, beforeToolCall received -> toolEnd received.
func approvalRoundTrip(bin string, n int) (med, p10, p90 float64, err error) {
	p, err := start(bin)
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.stop()
	sid, err := p.init(true, map[string]any{"toolExecution": "sequential", "scriptedTools": []any{
		map[string]any{"name": "edit", "requiresApproval": true, "steps": []any{map[string]any{"result": map[string]any{"content": []any{text("ok")}}}}},
	}})
	if err != nil {
		return 0, 0, 0, err
	}
	const perBatch = 500
	lat := make([]time.Duration, 0, n)
	warm := 500
	for id := 10; len(lat) < n; id++ {
		calls := make([]any, perBatch)
		for k := range calls {
			calls[k] = map[string]any{"id": fmt.Sprintf("c%d", k), "name": "edit", "arguments": map[string]any{}}
		}
		p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/execute", "params": map[string]any{"sessionId": sid, "toolCalls": calls}})
		var asked time.Time
		for {
			b, err := p.read()
			if err != nil {
				return 0, 0, 0, err
			}
			method := gjson.GetBytes(b, "method").String()
			switch method {
			case "beforeToolCall":
				asked = time.Now()
				reqID := gjson.GetBytes(b, "id").Raw
				if err := p.send([]byte(`{"jsonrpc":"2.0","id":` + reqID + `,"result":{"decision":"allow"}}`)); err != nil {
					return 0, 0, 0, err
				}
			case "toolEnd":
				d := time.Since(asked)
				if warm > 0 {
					warm--
				} else if len(lat) < n {
					lat = append(lat, d)
				}
			case "":
				if gjson.GetBytes(b, "id").Int() == int64(id) {
					goto next
				}
			}
		}
	next:
	}
	slices.Sort(lat)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	return us(lat[len(lat)/2]), us(lat[len(lat)/10]), us(lat[len(lat)*9/10]), nil
}

// notificationRate runs a parallel batch of tools that each send many progress updates and
// counts the $/toolUpdate and toolEnd notifications received per second.
func notificationRate(bin string, total int) (float64, int, error) {
	p, err := start(bin)
	if err != nil {
		return 0, 0, err
	}
	defer p.stop()
	const perTool = 1000
	steps := make([]any, 0, perTool+1)
	for i := 0; i < perTool; i++ {
		steps = append(steps, map[string]any{"update": map[string]any{"content": []any{text("progress " + strconv.Itoa(i))}}})
	}
	steps = append(steps, map[string]any{"result": map[string]any{"content": []any{text("ok")}}})
	sid, err := p.init(false, map[string]any{"scriptedTools": []any{map[string]any{"name": "chatty", "steps": steps}}})
	if err != nil {
		return 0, 0, err
	}
	calls := make([]any, total/perTool)
	for k := range calls {
		calls[k] = map[string]any{"id": fmt.Sprintf("c%d", k), "name": "chatty", "arguments": map[string]any{}}
	}
	p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 10, "method": "tools/execute", "params": map[string]any{"sessionId": sid, "toolCalls": calls}})
	var first, last time.Time
	count := 0
	for {
		b, err := p.read()
		if err != nil {
			return 0, 0, err
		}
		switch gjson.GetBytes(b, "method").String() {
		case "$/toolUpdate", "toolEnd":
			if count == 0 {
				first = time.Now()
			}
			count++
			last = time.Now()
		case "":
			if gjson.GetBytes(b, "id").Int() == 10 {
				want := len(calls) * (perTool + 1)
				if count != want {
					return 0, 0, fmt.Errorf("received %d notifications, want %d", count, want)
				}
				return float64(count-1) / last.Sub(first).Seconds(), count, nil
			}
		}
	}
}

// startToInitialize starts pid n times and times process start -> initialize response.
func startToInitialize(bin string, n int) (med, min, max float64, err error) {
	var ms []float64
	for i := 0; i < n; i++ {
		t := time.Now()
		p, err := start(bin)
		if err != nil {
			return 0, 0, 0, err
		}
		p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}}})
		if _, err := p.until(1); err != nil {
			return 0, 0, 0, err
		}
		ms = append(ms, float64(time.Since(t).Microseconds())/1000)
		p.stop()
	}
	slices.Sort(ms)
	return ms[len(ms)/2], ms[0], ms[len(ms)-1], nil
}
