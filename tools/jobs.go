// This file holds a session's background jobs (Jobs, one per Workspace): the commands a bash
// call started with background: true, each in a process group of its own and, sandboxed,
// in a helper of its own in the session's network, with its output kept in a ring. It
// starts them (for bash), reads and stops them (for job_output and job_kill, jobtools.go),
// lists them and says when one starts or ends (for jobs/list, jobs/kill and the jobUpdate
// notification the wiring sends), tells the checkpoints what they changed, and ends them
// all with the session.

package tools

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/internal/rootfile"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/workspace/launch"
)

// The jobs' limits and timings.
const (
	// MaxRunningJobs is how many jobs of a session may run at once.
	MaxRunningJobs = 8
	// JobDefaultWait is how long a background call (or a job_output with waitFor) waits
	// for waitFor by default; JobMaxWait the most it may ask for.
	JobDefaultWait = 10 * time.Second
	JobMaxWait     = 120 * time.Second
	// jobKillGrace is how long job_kill gives a job between SIGTERM and SIGKILL;
	// jobCloseGrace the same when the session closes.
	jobKillGrace  = 2 * time.Second
	jobCloseGrace = 500 * time.Millisecond
	// jobHoldBack is the longest unfinished last line a read of a running job holds back
	// for the next read (a secret cut in two would escape the redaction).
	jobHoldBack = 4 << 10
	// jobMatchLine caps how much of an unfinished line waitFor is matched against.
	jobMatchLine = 64 << 10
)

// JobInfo is a job as jobs/list shows it.
type JobInfo struct {
	JobID   string `json:"jobId"`
	Command string `json:"command"`
	// StartedAt is RFC 3339 (UTC, milliseconds).
	StartedAt string `json:"startedAt"`
	Running   bool   `json:"running"`
	// ExitCode is set once the job ended: its code, or 128+N when signal N ended it.
	ExitCode    *int  `json:"exitCode,omitempty"`
	OutputBytes int64 `json:"outputBytes"`
}

// JobUpdate says a job started or ended: the jobUpdate notification's fields but the
// session's id.
type JobUpdate struct {
	JobID    string `json:"jobId"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// JobDetails are the details of a background bash call, of job_output and of job_kill.
type JobDetails struct {
	JobID    string `json:"jobId"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exitCode,omitempty"`
	// Matched says whether the output matched waitFor (set only when waitFor was given).
	Matched *bool `json:"matched,omitempty"`
	// Sandbox says how the job is contained (a background call's result only).
	Sandbox *SandboxDetails `json:"sandbox,omitempty"`
	// TerminalID is the editor's terminal the job runs in (see UseTerminals); "" when pid
	// runs it.
	TerminalID string `json:"terminalId,omitempty"`
}

// JobState is what JobCheckpoints compares the workspace against: a snapshot of it, opaque
// to the jobs, of a comparable type (a pointer): Observe compares two of them.
type JobState any

// JobCheckpoints records what background jobs change in the workspace into the session's
// checkpoints: the change is recorded in the checkpoint open when pid sees it, at a
// job_output, a job_kill, or the prompt's end (Jobs.Observe). The session implements it with
// checkpoint.Session (JobBefore, JobSeen).
//
// Contract: JobBefore is called from a bash call's goroutine before a job's command starts
// when no job's changes are being watched yet, and returns the state to compare with (nil
// when none could be taken: nothing is recorded until the next JobBefore). JobSeen is
// called with the state last returned, from a job tool's goroutine or Observe's caller,
// never concurrently with itself or JobBefore; it records every file that differs from
// since (and that pid's own tools did not change to what it is) into the checkpoint open
// now, and returns the state to compare with next time (since itself when no checkpoint is
// open, so that nothing is lost). Both return promptly when ctx ends and never fail the
// call (what cannot be recorded makes the checkpoint incomplete).
type JobCheckpoints interface {
	JobBefore(ctx context.Context) JobState
	JobSeen(ctx context.Context, since JobState) JobState
}

// Jobs are a session's background jobs. Safe for concurrent use.
type Jobs struct {
	ws *Workspace
	wg sync.WaitGroup // the jobs' goroutines

	// snapMu is held while the checkpoints' snapshots run (JobBefore, JobSeen).
	snapMu sync.Mutex
	base   JobState // the state JobSeen compares with; nil when no job is watched

	// mu guards the fields below it.
	mu       sync.Mutex
	list     []*job // in the order they started; ended ones stay until Close
	starting int    // jobs reserved but not in list yet
	next     int
	closed   bool
	onUpdate func(JobUpdate)
	snaps    JobCheckpoints
}

// job is one background job.
type job struct {
	id, command string
	started     time.Time
	run         *launched
	out         *ring
	done        chan struct{} // closed once it ended, was reaped, and its output read
	readDone    chan struct{} // closed once its output ended (read)

	// Guarded by Jobs.mu.
	ended    bool
	exitCode int
	note     string // the check after it, said at the next read
	readAt   int64  // the output's offset up to which it was read
	killedBy string // "job_kill", "the session's end": who stopped it, for its result
}

// OnUpdate sets the function told when a job starts or ends (the wiring sends jobUpdate).
//
// Contract: called before the session's first tool call. f is called from the jobs'
// goroutines, one call at a time per job, never with a lock of the Jobs held; it must not
// block and must not wait for a job.
func (j *Jobs) OnUpdate(f func(JobUpdate)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.onUpdate = f
}

// UseCheckpoints makes the jobs record what they change through c. Contract: called
// before the session's first tool call.
func (j *Jobs) UseCheckpoints(c JobCheckpoints) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.snaps = c
}

// List returns the session's jobs, running and ended, in the order they started.
func (j *Jobs) List() []JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JobInfo, 0, len(j.list))
	for _, jb := range j.list {
		out = append(out, jb.infoLocked())
	}
	return out
}

func (jb *job) infoLocked() JobInfo {
	i := JobInfo{JobID: jb.id, Command: jb.command, StartedAt: jb.started.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Running: !jb.ended, OutputBytes: jb.out.size()}
	if jb.ended {
		c := jb.exitCode
		i.ExitCode = &c
	}
	return i
}

// find returns the job id, or an error result naming the session's jobs.
func (j *Jobs) find(id string) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, jb := range j.list {
		if jb.id == id {
			return jb, nil
		}
	}
	var ids []string
	for _, jb := range j.list {
		ids = append(ids, jb.id)
	}
	if len(ids) == 0 {
		return nil, failf("There is no job %s: this session has started none (bash with background: true starts one).", id)
	}
	return nil, failf("There is no job %s in this session; its jobs are %s.", id, strings.Join(ids, ", "))
}

// Kill stops the job id (SIGTERM to its process group, SIGKILL after 2 s) and waits for its
// end; a job that has ended already is left as it is. It returns the job as it is then, or
// an error for an unknown id (the error's text says which jobs there are).
func (j *Jobs) Kill(id string) (JobInfo, error) {
	jb, err := j.find(id)
	if err != nil {
		return JobInfo{}, err
	}
	j.stop(jb, jobKillGrace, "job_kill")
	j.mu.Lock()
	defer j.mu.Unlock()
	return jb.infoLocked(), nil
}

// Output returns, for the person (jobs/output), the last 2000 lines and 50 KB of what the
// job id printed that is still kept (behind a note of what was cut or dropped), and the job
// as jobs/list shows it; the model's read mark does not move. An unknown id is an error
// whose text names the session's jobs. The text is not redacted: the caller redacts it.
func (j *Jobs) Output(id string) (string, JobInfo, error) {
	jb, err := j.find(id)
	if err != nil {
		return "", JobInfo{}, err
	}
	data, dropped, _, _ := jb.out.since(0)
	t := newTail()
	t.write(data)
	text, _ := t.snapshot()
	if dropped > 0 {
		text = fmt.Sprintf("[%s of older output were dropped: a job keeps the last %s of its output.]\n", rootfile.Size(dropped), rootfile.Size(JobOutputBytes)) + text
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return text, jb.infoLocked(), nil
}

// ended reports whether jb has ended.
func (j *Jobs) ended(jb *job) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return jb.ended
}

// stop ends jb (when it runs): SIGTERM to its group, SIGKILL once grace has passed, and waits
// for its end.
func (j *Jobs) stop(jb *job, grace time.Duration, by string) {
	j.mu.Lock()
	if !jb.ended && jb.killedBy == "" {
		jb.killedBy = by
	}
	j.mu.Unlock()
	jb.run.signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-jb.done:
		return
	case <-t.C:
	}
	jb.run.signal(syscall.SIGKILL)
	<-jb.done
}

// Close ends every running job (SIGTERM, then SIGKILL after half a second), waits until
// each is reaped and its goroutines are done, and refuses new ones. The session's close
// and the daemon's exit call it (Workspace.Close does). Safe to call again.
func (j *Jobs) Close() {
	j.mu.Lock()
	j.closed = true
	list := append([]*job(nil), j.list...)
	j.mu.Unlock()
	var wg sync.WaitGroup
	for _, jb := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.stop(jb, jobCloseGrace, "the session's end")
		}()
	}
	wg.Wait()
	j.wg.Wait()
}

// Observe records what the jobs changed in the workspace since it was last seen into the
// checkpoint open now (JobCheckpoints.JobSeen), when a job was running since then. The
// session calls it at a prompt's end; job_output and job_kill call it too.
func (j *Jobs) Observe(ctx context.Context) {
	j.mu.Lock()
	snaps := j.snaps
	running := false
	for _, jb := range j.list {
		running = running || !jb.ended
	}
	j.mu.Unlock()
	if snaps == nil {
		return
	}
	j.snapMu.Lock()
	defer j.snapMu.Unlock()
	if j.base == nil {
		return
	}
	prev := j.base
	j.base = snaps.JobSeen(ctx, prev)
	if !running && j.base != prev {
		// Nothing of a job runs any more (it ended before this look) and what it changed
		// has been recorded: nothing to watch until the next job. (The same state back
		// means no checkpoint was open: the next look records it.)
		j.base = nil
	}
}

// before takes the state the jobs' changes are compared with, unless one is held already.
func (j *Jobs) before(ctx context.Context) {
	j.mu.Lock()
	snaps := j.snaps
	j.mu.Unlock()
	if snaps == nil {
		return
	}
	j.snapMu.Lock()
	defer j.snapMu.Unlock()
	if j.base == nil {
		j.base = snaps.JobBefore(ctx)
	}
}

// runningLocked returns the running jobs, "job-1 (npm run dev)".
func (j *Jobs) runningLocked() []string {
	var out []string
	for _, jb := range j.list {
		if !jb.ended {
			out = append(out, fmt.Sprintf("%s (%s)", jb.id, clipCommand(jb.command)))
		}
	}
	return out
}

// clipCommand shortens a command for a list.
func clipCommand(c string) string {
	c = strings.Join(strings.Fields(c), " ")
	if len(c) > 80 {
		cut := 77
		for cut > 0 && c[cut]&0xC0 == 0x80 {
			cut--
		}
		c = c[:cut] + "..."
	}
	return c
}

// startJob starts a background bash call's command as a job and waits, as a.WaitFor and
// a.WaitMs say, before it returns the call's result (see the bash tool's schema).
func (j *Jobs) startJob(ctx context.Context, shell string, a bashArgs) (toolexec.Result, error) {
	var re *regexp.Regexp
	if a.WaitFor != nil {
		var err error
		if re, err = regexp.Compile(*a.WaitFor); err != nil {
			return toolexec.Result{}, failf("waitFor is not a regular expression (RE2 syntax): %v. Nothing was started.", err)
		}
	}
	wait := JobDefaultWait
	if a.WaitMs != nil {
		wait = min(time.Duration(*a.WaitMs*float64(time.Millisecond)), JobMaxWait)
	}
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return toolexec.Result{}, failf("The session is closing: no job can start.")
	}
	if running := j.runningLocked(); len(running)+j.starting >= MaxRunningJobs {
		j.mu.Unlock()
		return toolexec.Result{}, failf("The command did not start: %d jobs run already, the most a session may have (%s). "+
			"Stop one with job_kill, or wait until one exits.", len(running)+j.starting, strings.Join(running, ", "))
	}
	j.starting++
	j.next++
	id := "job-" + strconv.Itoa(j.next)
	j.mu.Unlock()
	unreserve := func() {
		j.mu.Lock()
		j.starting--
		j.mu.Unlock()
	}
	j.before(ctx)
	who := launch.Caller{ID: id, Command: a.Command, Job: true}
	var run *launched
	var err error
	if t := j.ws.terminals(); t != nil {
		run, err = j.ws.launchInTerminal(ctx, t, shell, a, who)
	}
	if run == nil && err == nil {
		run, err = j.ws.launch(ctx, shell, a.Command, a.Unsandboxed, who)
	}
	if err != nil {
		unreserve()
		return toolexec.Result{}, err
	}
	jb := &job{id: id, command: a.Command, started: run.began, run: run, out: newRing(JobOutputBytes),
		done: make(chan struct{}), readDone: make(chan struct{})}
	j.mu.Lock()
	j.starting--
	j.list = append(j.list, jb)
	closed := j.closed
	notify := j.onUpdate
	j.wg.Add(2)
	j.mu.Unlock()
	go j.read(jb)
	go j.await(jb)
	if run.box != nil {
		run.box.Spare() // the next call's helper; this one is the job's for its life
	}
	if notify != nil {
		notify(JobUpdate{JobID: id, Running: true})
	}
	if closed {
		j.stop(jb, 0, "the session's end") // Close ran meanwhile and did not see it
	}

	matched, stopped := jb.wait(ctx, re, 0, wait, true)
	if stopped {
		// The person stopped the call: the job it started goes too (nobody knows its id).
		j.stop(jb, bashKillGrace, "the abort")
		return toolexec.Result{}, failf("The call was stopped; job %s, which it started, was killed with every process it started.", id)
	}
	r := j.readOut(jb, fmt.Sprintf("Started %s: %s", id, a.Command), matchedPtr(re, matched), 0, true)
	if r.failed {
		return toolexec.Result{}, &failure{text: r.text, details: r.det}
	}
	return toolexec.Result{Content: []llm.Content{llm.Text(r.text)}, Details: r.det}, nil
}

func matchedPtr(re *regexp.Regexp, matched bool) *bool {
	if re == nil {
		return nil
	}
	return &matched
}

// read copies the job's output into its ring until the end of the output (once the job's
// helper has exited, every process of its namespace is gone and the pipe ends; an
// unsandboxed job's background processes may hold it open: await then cuts it short).
func (j *Jobs) read(jb *job) {
	defer j.wg.Done()
	defer close(jb.readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := jb.run.out.Read(buf)
		jb.out.write(buf[:n])
		if err != nil {
			return
		}
	}
}

// await waits for the job's end, reads what is left of its output, runs the check after
// it, records how it ended and says so.
func (j *Jobs) await(jb *job) {
	defer j.wg.Done()
	waitErr := jb.run.wait()
	// A process left holding the output (an unsandboxed job's): what is there is read,
	// then the read stops.
	_ = jb.run.out.SetReadDeadline(time.Now().Add(bashDrainGrace))
	<-jb.readDone
	jb.run.out.Close()
	code, signaled, sig := exitOf(jb.run)
	if signaled {
		code = 128 + int(sig)
	}
	note := ""
	if waitErr != nil && code == -1 {
		note = fmt.Sprintf("\n\n[pid: waiting for the job failed: %v]", waitErr)
	}
	if jb.run.box != nil {
		note += jb.run.box.CheckAfter()
		note += jb.run.box.ProxyRefusals()
	}
	j.mu.Lock()
	jb.ended, jb.exitCode = true, code
	jb.note += note
	notify := j.onUpdate
	j.mu.Unlock()
	close(jb.done)
	if notify != nil {
		c := code
		notify(JobUpdate{JobID: jb.id, Running: false, ExitCode: &c})
	}
}

// read is what a read of a job returns: the output since the last read and how the job
// stands.
type jobRead struct {
	text string
	det  JobDetails
	// failed says the job ended with a code other than 0.
	failed bool
}

// readOut returns the job's output since its last read (the last 2000 lines and 50 KB of
// it, or of its last tail lines when tail > 0, behind a note of what was cut or dropped), and
// the line that says how it stands; it moves the read mark. While the job runs, an
// unfinished last line (up to 4 KB) is left for the next read, unless waitFor matched (a
// ready line may come without its line break yet: a Python print unbuffered writes the two
// apart).
func (j *Jobs) readOut(jb *job, head string, matched *bool, tail int, withSandbox bool) jobRead {
	j.mu.Lock()
	defer j.mu.Unlock()
	ended := jb.ended
	data, dropped, _, _ := jb.out.since(jb.readAt)
	if !ended && (matched == nil || !*matched) {
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 && len(data)-(i+1) <= jobHoldBack {
			data = data[:i+1]
		} else if i < 0 && len(data) <= jobHoldBack {
			data = nil
		}
	}
	jb.readAt += dropped + int64(len(data))
	if tail > 0 {
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > tail {
			data = bytes.Join(lines[len(lines)-tail:], nil)
		}
	}
	t := newTail()
	t.write(data)
	text, _ := t.snapshot()
	var b strings.Builder
	if head != "" {
		b.WriteString(head + "\n\n")
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "[%s of older output were dropped: a job keeps the last %s of its output.]\n", rootfile.Size(dropped), rootfile.Size(JobOutputBytes))
	}
	if text == "" {
		text = "(no new output)"
	}
	b.WriteString(strings.TrimSuffix(text, "\n"))
	det := JobDetails{JobID: jb.id, Running: !ended, Matched: matched}
	if jb.run.term != nil {
		det.TerminalID = jb.run.term.id
	}
	switch {
	case !ended:
		fmt.Fprintf(&b, "\n\n[%s is running. job_output reads what it prints next; job_kill stops it.]", jb.id)
	case jb.exitCode > 128 && jb.killedBy != "":
		fmt.Fprintf(&b, "\n\n[%s was stopped by %s (signal %d).]", jb.id, jb.killedBy, jb.exitCode-128)
	case jb.exitCode > 128:
		fmt.Fprintf(&b, "\n\n[%s was killed by signal %d.]", jb.id, jb.exitCode-128)
	default:
		fmt.Fprintf(&b, "\n\n[%s exited with code %d.]", jb.id, jb.exitCode)
	}
	if ended {
		c := jb.exitCode
		det.ExitCode = &c
		b.WriteString(jb.note)
		jb.note = ""
	}
	if box := jb.run.box; box != nil && withSandbox {
		d := box.Details()
		det.Sandbox = &d
	} else if withSandbox {
		d := *jb.run.details
		det.Sandbox = &d
	}
	return jobRead{text: b.String(), det: det, failed: ended && jb.exitCode != 0 && jb.killedBy == ""}
}

// wait waits, from output offset from, until a line of the job's output matches re (when
// re is set), the job ends, wait passes, or ctx ends (stopped). exitWait says that, without
// re, the wait is for the job's end (else it returns at once).
func (jb *job) wait(ctx context.Context, re *regexp.Regexp, from int64, wait time.Duration, exitWait bool) (matched, stopped bool) {
	if re == nil && !exitWait {
		return false, false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	pos := from
	var line []byte // the unfinished line so far
	for {
		data, _, end, changed := jb.out.since(pos)
		pos = end
		if re != nil && len(data) > 0 {
			line = append(line, data...)
			for {
				i := bytes.IndexByte(line, '\n')
				if i < 0 {
					break
				}
				if re.Match(line[:i]) {
					return true, false
				}
				line = line[i+1:]
			}
			if len(line) > jobMatchLine {
				line = line[len(line)-jobMatchLine:]
			}
			if len(line) > 0 && re.Match(line) {
				return true, false
			}
		}
		select {
		case <-changed:
		case <-jb.done:
			// The end: what is left of the output was read before done; look once more.
			data, _, _, _ := jb.out.since(pos)
			if re != nil && len(data) > 0 {
				for l := range bytes.Lines(append(line, data...)) {
					if re.Match(bytes.TrimSuffix(l, []byte("\n"))) {
						return true, false
					}
				}
			}
			return false, false
		case <-timer.C:
			return false, false
		case <-ctx.Done():
			return false, true
		}
	}
}
