// Command pidsoak runs one pid daemon (the real binary, over pipes) for a long time and
// watches what it holds: resident memory, live heap, open file descriptors, OS threads and
// goroutines, at the start, after a warm-up and at checkpoints until the end. A daemon that
// leaks grows after its warm-up by more than what it is asked to keep (the sessions'
// transcripts); pidsoak prints that growth next to the transcripts' size.
//
//	go run ./cmd/pidsoak [-pid BINARY] [-sessions 20] [-prompts 4000] [-warmup 400] [-idle 1000]
//
// Without -pid it builds ./cmd/pid first (run it from the repository).
//
// The soak: -sessions sessions, each with a scripted model and a scripted tool, run
// -prompts prompts between them, concurrently; each prompt is a batch of two scripted
// calls (with progress) and one built-in call (read, grep, ls, find, bash or write, in
// turn, in a temporary workspace), then a final answer. The idle measure: a second daemon
// opens -idle sessions with the built-in tools and no prompt, and pidsoak divides the growth
// of its memory by their number.
//
// pid's goroutines and live heap come from its PID_STATS line (see cmd/pid/stats.go): pidsoak
// sends SIGUSR1 and reads the line from pid's stderr. The rest comes from /proc (Linux).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/internal/pidtest"
	"github.com/pid-agent/pid/llm"
)

func main() {
	bin := flag.String("pid", "", "the pid binary (default: build ./cmd/pid)")
	sessions := flag.Int("sessions", 20, "sessions of the soak")
	prompts := flag.Int("prompts", 4000, "prompts of the soak, over all sessions")
	warmup := flag.Int("warmup", 400, "prompts before the warm-up measure")
	checkpoints := flag.Int("checkpoints", 4, "measures between the warm-up and the end")
	idle := flag.Int("idle", 1000, "sessions of the idle-memory measure (0: skip it)")
	flag.Parse()
	if err := run(*bin, *sessions, *prompts, *warmup, *checkpoints, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "pidsoak:", err)
		os.Exit(1)
	}
}

func run(bin string, sessions, prompts, warmup, checkpoints, idle int) error {
	if sessions < 1 || prompts < sessions || warmup < 0 || warmup >= prompts {
		return errors.New("need -sessions >= 1, -prompts >= -sessions and 0 <= -warmup < -prompts")
	}
	tmp, err := os.MkdirTemp("", "pidsoak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		fmt.Println("building pid into", tmp)
		if bin, err = pidtest.Build(tmp, pidtest.PidPackage, false); err != nil {
			return fmt.Errorf("%v (run pidsoak from the repository)", err)
		}
	}
	if err := soak(bin, tmp, sessions, prompts, warmup, checkpoints); err != nil {
		return err
	}
	if idle > 0 {
		return idleMemory(bin, tmp, idle)
	}
	return nil
}

// sample is one measure of the daemon.
type sample struct {
	label      string
	prompts    int
	rssKB      int64
	threads    int64
	fds        int
	goroutines int64
	heapLive   int64 // bytes in use right after a collection
	// transcript is what the sessions' transcripts hold by then: their messages as JSON
	// (as pid returned them) and as llm.Message values (decoded here, measured on
	// pidsoak's own heap after a collection).
	transcriptJSON  int64
	transcriptModel int64
}

func soak(bin, tmp string, sessions, prompts, warmup, checkpoints int) error {
	ws := filepath.Join(tmp, "ws")
	if err := workspace(ws); err != nil {
		return err
	}
	c, err := startClient(bin, tmp)
	if err != nil {
		return err
	}
	defer c.stop()
	if err := c.initialize(ws); err != nil {
		return err
	}
	per := (prompts + sessions - 1) / sessions
	ids := make([]string, sessions)
	for i := range ids {
		r, err := c.call("session/new", sessionParams(ws, i, per))
		if err != nil {
			return fmt.Errorf("session/new: %v", err)
		}
		ids[i] = gjson.GetBytes(r, "sessionId").String()
	}
	fmt.Printf("soak: pid %d, %d sessions, %d prompts (%d per session), each a batch of 2 scripted calls and 1 built-in call\n",
		c.Pid(), sessions, per*sessions, per)

	var jsonBytes atomic.Int64
	var mu sync.Mutex
	kept := make([][]llm.Message, sessions) // the transcripts, as pid holds them
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	measure := func(label string, done int) (sample, error) {
		s, err := c.sample(label)
		if err != nil {
			return s, err
		}
		s.prompts = done
		s.transcriptJSON = jsonBytes.Load()
		mu.Lock()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		runtime.KeepAlive(kept)
		mu.Unlock()
		s.transcriptModel = int64(m.HeapAlloc) - int64(base.HeapAlloc)
		return s, nil
	}
	var samples []sample
	add := func(label string, done int) error {
		s, err := measure(label, done)
		if err != nil {
			return err
		}
		samples = append(samples, s)
		fmt.Printf("  %-10s %6d prompts  rss %7.1f MB  heap %7.1f MB  fds %4d  threads %3d  goroutines %4d  transcripts %7.1f MB JSON, %7.1f MB in memory\n",
			s.label, s.prompts, float64(s.rssKB)/1024, mb(s.heapLive), s.fds, s.threads, s.goroutines, mb(s.transcriptJSON), mb(s.transcriptModel))
		return nil
	}
	if err := add("start", 0); err != nil {
		return err
	}

	// Phases: the warm-up, then checkpoints at equal steps. Within a phase every session
	// runs its share of prompts one after the other, all sessions at once.
	marks := []int{warmup / sessions}
	for k := 1; k <= checkpoints; k++ {
		marks = append(marks, marks[0]+(per-marks[0])*k/checkpoints)
	}
	next := 0 // prompts done per session
	began := time.Now()
	for mi, mark := range marks {
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for si := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := next; k < mark; k++ {
					r, err := c.call("session/prompt", map[string]any{"sessionId": ids[si], "text": fmt.Sprintf("prompt %d", k)})
					if err != nil {
						errs <- fmt.Errorf("session %s prompt %d: %v", ids[si], k, err)
						return
					}
					msgs := gjson.GetBytes(r, "messages")
					if err := checkPrompt(r, k); err != nil {
						errs <- fmt.Errorf("session %s: %v", ids[si], err)
						return
					}
					var decoded []llm.Message
					if err := json.Unmarshal([]byte(msgs.Raw), &decoded); err != nil {
						errs <- err
						return
					}
					jsonBytes.Add(int64(len(msgs.Raw)))
					mu.Lock()
					kept[si] = append(kept[si], decoded...)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		next = mark
		label := "warm-up"
		if mi > 0 {
			label = fmt.Sprintf("check %d", mi)
		}
		if mi == len(marks)-1 {
			label = "end"
		}
		if err := add(label, mark*sessions); err != nil {
			return err
		}
	}
	took := time.Since(began)
	fmt.Printf("  %d prompts in %v (%.0f prompts/s), %d notifications\n", next*sessions, took.Round(time.Millisecond),
		float64(next*sessions)/took.Seconds(), c.notes.Load())
	report(samples)

	// The same batches through tools/execute, which adds nothing to the transcripts: here
	// nothing should grow at all.
	before := samples[len(samples)-1]
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for si := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range per {
				calls := []any{
					map[string]any{"id": fmt.Sprintf("x%d_a", k), "name": "work", "arguments": map[string]any{"i": k}},
					map[string]any{"id": fmt.Sprintf("x%d_b", k), "name": "work", "arguments": map[string]any{"i": k + 1}},
				}
				b := builtinCall(fmt.Sprintf("x%d_c", k), si, k)
				calls = append(calls, map[string]any{"id": b["id"], "name": b["name"], "arguments": b["arguments"]})
				r, err := c.call("tools/execute", map[string]any{"sessionId": ids[si], "toolCalls": calls})
				if err != nil {
					errs <- err
					return
				}
				for _, m := range gjson.GetBytes(r, "messages").Array() {
					if m.Get("isError").Bool() {
						errs <- fmt.Errorf("batch %d: %s failed: %s", k, m.Get("toolName"), truncate(m.Raw))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := add("batches", next*sessions); err != nil {
		return err
	}
	after := samples[len(samples)-1]
	fmt.Printf("after %d more batches through tools/execute (no transcript):\n", per*sessions)
	verdict := "met"
	if pct(after.heapLive-before.heapLive, before.heapLive) > 10 {
		verdict = "MISSED"
	}
	fmt.Printf("  live heap   %+8.1f MB (%+.1f%%; target: at most +10%%: %s)\n", mb(after.heapLive-before.heapLive), pct(after.heapLive-before.heapLive, before.heapLive), verdict)
	fmt.Printf("  rss         %+8.1f MB (%+.1f%%)\n", float64(after.rssKB-before.rssKB)/1024, pct(after.rssKB-before.rssKB, before.rssKB))
	fmt.Printf("  fds %+d, threads %+d, goroutines %+d\n", after.fds-before.fds, after.threads-before.threads, after.goroutines-before.goroutines)
	return nil
}

// report prints the growth from the warm-up to the end, and how much of it the
// transcripts explain.
func report(samples []sample) {
	w, e := samples[1], samples[len(samples)-1]
	heapGrowth := e.heapLive - w.heapLive
	modelGrowth := e.transcriptModel - w.transcriptModel
	unexplained := heapGrowth - modelGrowth
	fmt.Printf("after warm-up (%d -> %d prompts):\n", w.prompts, e.prompts)
	fmt.Printf("  live heap   %+8.1f MB (%+.1f%%); the transcripts added %.1f MB as JSON, %.1f MB as llm.Message values decoded here\n",
		mb(heapGrowth), pct(heapGrowth, w.heapLive), mb(e.transcriptJSON-w.transcriptJSON), mb(modelGrowth))
	// The decoded copy is an upper bound of what pid spends on them: pid's assistant
	// messages share their text and arguments with the scripted turns it held from the start.
	verdict := "met"
	if pct(unexplained, w.heapLive) > 10 {
		verdict = "MISSED"
	}
	fmt.Printf("              growth beyond that copy: %+.1f MB, %+.1f%% of the warm-up heap (target: at most +10%%: %s)\n",
		mb(unexplained), pct(unexplained, w.heapLive), verdict)
	fmt.Printf("  per prompt  %+.0f bytes of live heap, %.0f bytes of transcript JSON\n", float64(heapGrowth)/float64(e.prompts-w.prompts), float64(e.transcriptJSON-w.transcriptJSON)/float64(e.prompts-w.prompts))
	fmt.Printf("  rss         %+8.1f MB (%+.1f%%)\n", float64(e.rssKB-w.rssKB)/1024, pct(e.rssKB-w.rssKB, w.rssKB))
	fmt.Printf("  fds         %+d (%d -> %d)\n", e.fds-w.fds, w.fds, e.fds)
	fmt.Printf("  threads     %+d (%d -> %d)\n", e.threads-w.threads, w.threads, e.threads)
	fmt.Printf("  goroutines  %+d (%d -> %d)\n", e.goroutines-w.goroutines, w.goroutines, e.goroutines)
}

// idleMemory starts a second daemon, opens n sessions with the built-in tools and no
// prompt, and prints the growth of its memory divided by n.
func idleMemory(bin, tmp string, n int) error {
	ws := filepath.Join(tmp, "idle-ws")
	if err := workspace(ws); err != nil {
		return err
	}
	c, err := startClient(bin, tmp)
	if err != nil {
		return err
	}
	defer c.stop()
	if err := c.initialize(ws); err != nil {
		return err
	}
	// One session first: what every session shares (the tool list, the watcher) is then
	// set up, and the measure is of what each more session costs.
	if _, err := c.call("session/new", map[string]any{"cwd": ws}); err != nil {
		return err
	}
	before, err := c.sample("before")
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := c.call("session/new", map[string]any{"cwd": ws}); err != nil {
			return fmt.Errorf("session/new %d: %v", i, err)
		}
	}
	after, err := c.sample("after")
	if err != nil {
		return err
	}
	fmt.Printf("idle sessions: %d session/new with the built-in tools, no prompt\n", n)
	fmt.Printf("  rss   %.1f MB -> %.1f MB: %.1f KB per session\n", float64(before.rssKB)/1024, float64(after.rssKB)/1024, float64(after.rssKB-before.rssKB)/float64(n))
	fmt.Printf("  heap  %.1f MB -> %.1f MB: %.1f KB per session (live, after a collection)\n", mb(before.heapLive), mb(after.heapLive), float64(after.heapLive-before.heapLive)/1024/float64(n))
	fmt.Printf("  fds %d -> %d, goroutines %d -> %d, threads %d -> %d\n", before.fds, after.fds, before.goroutines, after.goroutines, before.threads, after.threads)
	return nil
}

// workspace makes the folder the built-in tools work in.
func workspace(dir string) error {
	for i := range 5 {
		var b strings.Builder
		for l := range 40 {
			fmt.Fprintf(&b, "line %d of file %d\n", l, i)
		}
		p := filepath.Join(dir, "files", fmt.Sprintf("f%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(dir, "out"), 0o755)
}

// sessionParams is session/new for soak session i: a scripted model with per prompts of
// two turns each (a batch, then "done"), the scripted tool "work", and everything allowed.
func sessionParams(ws string, i, per int) map[string]any {
	turns := make([]any, 0, 2*per)
	for k := range per {
		turns = append(turns,
			map[string]any{"content": []any{
				toolCall(fmt.Sprintf("p%d_a", k), "work", map[string]any{"i": k}),
				toolCall(fmt.Sprintf("p%d_b", k), "work", map[string]any{"i": k + 1}),
				builtinCall(fmt.Sprintf("p%d_c", k), i, k),
			}},
			map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("done %d", k)}}, "stopReason": "stop"},
		)
	}
	return map[string]any{
		"cwd":         ws,
		"model":       map[string]any{"provider": "script", "turns": turns},
		"permissions": map[string]any{"default": "allow"},
		"scriptedTools": []any{map[string]any{
			"name":       "work",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"i": map[string]any{"type": "number"}}},
			"steps": []any{
				map[string]any{"update": map[string]any{"content": []any{map[string]any{"type": "text", "text": "half way"}}}},
				map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "worked"}}, "details": map[string]any{}}},
			},
		}},
	}
}

func toolCall(id, name string, args map[string]any) map[string]any {
	return map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}
}

// builtinCall is prompt k's built-in call in session i, in turn: read, grep, ls, find, bash,
// write (to the session's own file, which its previous write let it change again).
func builtinCall(id string, i, k int) map[string]any {
	switch k % 6 {
	case 0:
		return toolCall(id, "read", map[string]any{"path": fmt.Sprintf("files/f%d.txt", k%5)})
	case 1:
		return toolCall(id, "grep", map[string]any{"pattern": "line 1[0-9]", "path": "files"})
	case 2:
		return toolCall(id, "ls", map[string]any{"path": "files"})
	case 3:
		return toolCall(id, "find", map[string]any{"pattern": "*.txt"})
	case 4:
		return toolCall(id, "bash", map[string]any{"command": "echo soak $PPID"})
	}
	return toolCall(id, "write", map[string]any{"path": fmt.Sprintf("out/s%d.txt", i), "content": fmt.Sprintf("session %d prompt %d\n", i, k)})
}

// checkPrompt checks a prompt's result: the run stopped normally and added the user message,
// the batch, its three results (none an error) and the answer.
func checkPrompt(r []byte, k int) error {
	res := gjson.ParseBytes(r)
	if sr := res.Get("stopReason").String(); sr != "stop" {
		return fmt.Errorf("prompt %d stopped with %q: %s", k, sr, truncate(res.Raw))
	}
	msgs := res.Get("messages").Array()
	if len(msgs) != 6 {
		return fmt.Errorf("prompt %d added %d messages, want 6: %s", k, len(msgs), truncate(res.Raw))
	}
	for _, m := range msgs {
		if m.Get("role").String() == "toolResult" && m.Get("isError").Bool() {
			return fmt.Errorf("prompt %d: %s failed: %s", k, m.Get("toolName"), truncate(m.Raw))
		}
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func pct(d, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(d) / float64(of)
}

// client is the editor's end of one pid process (internal/pidtest): requests from any
// goroutine, answers routed by id, nothing kept (pidsoak measures its own heap too),
// notifications counted, pid's requests answered.
type client struct {
	*pidtest.Process
	notes atomic.Int64
	stats chan string // PID_STATS lines from pid's stderr
}

// startClient starts pid with PID_STATS set, in its own config and state folders.
func startClient(bin, tmp string) (*client, error) {
	home, err := os.MkdirTemp(tmp, "home-")
	if err != nil {
		return nil, err
	}
	c := &client{stats: make(chan string, 4)}
	p, err := pidtest.Start(bin, pidtest.Options{Home: home, Env: []string{"PID_STATS=1"}, Stderr: &lineWriter{line: c.stderrLine},
		Conn: pidtest.ConnOptions{Discard: true, HangGuard: 2 * time.Minute, OnMessage: c.dispatch}})
	if err != nil {
		return nil, err
	}
	c.Process = p
	return c, nil
}

// stderrLine passes pid's stats lines on and copies the rest to our stderr.
func (c *client) stderrLine(line string) {
	if strings.HasPrefix(line, "pid-stats ") {
		select {
		case c.stats <- line:
		default: // a line nobody asked for
		}
		return
	}
	fmt.Fprintln(os.Stderr, "pid:", line)
}

// lineWriter calls line with each whole line written to it.
type lineWriter struct {
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// dispatch counts pid's notifications and answers its requests (none is expected with
// everything allowed).
func (c *client) dispatch(m *pidtest.Msg) {
	switch {
	case m.IsRequest():
		var result any
		switch m.Method() {
		case "beforeToolCall":
			result = map[string]any{"decision": "allow"}
		case "workspace/requestTrust":
			result = map[string]any{"trusted": false}
		}
		c.Answer(m, result)
	case m.IsNotification():
		c.notes.Add(1)
	}
}

// call sends a request and returns its result.
func (c *client) call(method string, params any) ([]byte, error) {
	r, err := c.Call(method, params)
	if err != nil {
		return nil, err
	}
	return []byte(r.Raw), nil
}

func (c *client) initialize(ws string) error {
	_, err := c.call("initialize", map[string]any{"processId": os.Getpid(), "capabilities": map[string]any{},
		"workspaceFolders": []any{map[string]any{"uri": "file://" + ws, "name": "ws"}}})
	if err != nil {
		return err
	}
	return c.Notify("initialized", map[string]any{})
}

// sample measures the daemon: /proc for memory, threads and descriptors, its stats line for
// goroutines and the live heap.
func (c *client) sample(label string) (sample, error) {
	s := sample{label: label}
	pid := c.Pid()
	if err := c.Signal(statsSignal); err != nil {
		return s, err
	}
	select {
	case line := <-c.stats:
		for _, f := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "goroutines":
				s.goroutines = n
			case "heap_live":
				s.heapLive = n
			}
		}
	case <-time.After(30 * time.Second):
		return s, errors.New("pid printed no stats line (is PID_STATS supported by this binary?)")
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("reading /proc (pidsoak needs Linux): %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			s.rssKB = n
		case "Threads":
			s.threads = n
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	return s, nil
}

// stop ends the daemon as an editor does: shutdown, exit, stdin closed.
func (c *client) stop() { c.Stop(10 * time.Second) }
