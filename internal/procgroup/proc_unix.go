//go:build unix

// This file is the one place where pid starts child processes (StartGroup): each child
// leads a process group of its own, dies with pid (a parent-death signal on Linux, and a
// watchdog process for the rest of its group), and is listed in a registry, so KillGroups can
// end every group a tool started when pid winds down.

package procgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Group is a child process that StartGroup started, with the process group it leads. The
// group outlives the child when the child leaves processes running in the background; it
// stays in the registry, and KillGroups ends it, until no process of it is left.
type Group struct {
	cmd *exec.Cmd
	// remote, for a group another process started (Track), waits for its leader's end.
	remote func() (syscall.WaitStatus, error)
	pgid   int
	// status is the leader's wait status once Wait returned (hasStatus).
	status    syscall.WaitStatus
	hasStatus bool
	// waited and released are guarded by procs.mu: the leader has been waited for; the
	// group is empty and forgotten (its id may belong to someone else now: never signal it).
	waited   bool
	released bool
	spawned  bool // started on the spawner's thread, which it holds until Wait
}

// StartGroup starts cmd as the leader of a new process group, with SIGKILL as its
// parent-death signal on Linux, and registers the group so that KillGroups and, should pid
// be killed, the watchdog end it.
//
// Contract: safe for concurrent use; the caller sets up cmd (Dir, Env, Stdout, ...) but not
// SysProcAttr's Setpgid, Pgid or Pdeathsig, which StartGroup sets. The caller must call
// Group.Wait exactly once (instead of cmd.Wait). On failure nothing was started and the
// error is cmd.Start's.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	spawned := parentDeath(cmd.SysProcAttr)
	var err error
	if spawned {
		err = spawn.start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd, pgid: cmd.Process.Pid, spawned: spawned}
	procs.add(g)
	return g, nil
}

// Track registers the process group pgid, whose leader a process other than pid started
// for it and reaps (a sandbox holder's child: it is not pid's child, so pid cannot wait for
// it), so that Signal, KillGroups and, should pid be killed, the watchdog end it as they end
// StartGroup's groups. wait is called once, by Group.Wait, and returns once the leader has
// ended, with its wait status (an error when that cannot be known: the process reaping it
// went away).
//
// Contract: safe for concurrent use; the leader must lead the group pgid (its pid is pgid)
// and must not have been reaped yet when Track is called (its id cannot be someone else's).
func Track(pgid int, wait func() (syscall.WaitStatus, error)) *Group {
	g := &Group{remote: wait, pgid: pgid}
	procs.add(g)
	return g
}

// Pid returns the leader's process id, which is also the group's id. Safe for concurrent use.
func (g *Group) Pid() int { return g.pgid }

// Signal sends sig to every process of the group. A group that has ended is not signalled
// (its id may have been given to another process since).
//
// Contract: safe for concurrent use; it does not wait for the group to end, and never
// fails (a group that is already gone is what the caller wanted).
func (g *Group) Signal(sig syscall.Signal) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if !g.released {
		_ = syscall.Kill(-g.pgid, sig)
	}
}

// Wait waits for the leader to exit and returns cmd.Wait's error. The group stays registered
// while processes the leader left behind run.
//
// Contract: called exactly once per Group, by whoever started it; it blocks until the leader
// exits (signal the group to hurry it).
func (g *Group) Wait() error {
	var err error
	var st syscall.WaitStatus
	ok := false
	if g.remote != nil {
		st, err = g.remote()
		ok = err == nil
	} else {
		err = g.cmd.Wait()
		if g.cmd.ProcessState != nil {
			st, ok = g.cmd.ProcessState.Sys().(syscall.WaitStatus)
		}
		if g.spawned {
			spawn.done()
		}
	}
	procs.mu.Lock()
	g.status, g.hasStatus = st, ok
	g.waited = true
	procs.pruneLocked(false)
	procs.mu.Unlock()
	return err
}

// Status returns the leader's wait status, once Wait has returned and when it is known.
// Contract: called after Wait, from the goroutine that called it (or one it synchronised
// with).
func (g *Group) Status() (syscall.WaitStatus, bool) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return g.status, g.hasStatus
}

// KillGroups ends every process group that StartGroup started and that still has a
// process: SIGTERM to each, then SIGKILL to those still there after grace (at once when
// grace is 0). It returns the number of groups it signalled.
//
// Contract: called by the daemon as it exits (stdin closed, SIGTERM, SIGINT), after the
// faces have cancelled their runs, so that nothing a tool started outlives pid; safe for
// concurrent use and to call more than once. It takes at most about grace.
func KillGroups(grace time.Duration) int {
	return procs.killAll(grace)
}

// procs is the registry of the groups StartGroup started.
var procs = &registry{groups: map[int]*Group{}}

// registry holds the process groups StartGroup started that may still have processes.
type registry struct {
	// mu guards the fields below it, and every Group's waited and released.
	mu     sync.Mutex
	groups map[int]*Group
	// sweep, when set, prunes again soon: a group whose leader was waited for may still
	// hold background processes, and must be forgotten soon after they end.
	sweep *time.Timer
	dog   watchdog
}

// sweepEvery is how often the registry looks whether the background processes of a group
// whose leader has exited are gone.
const sweepEvery = time.Second

func (r *registry) add(g *Group) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[g.pgid] = g
	r.dog.tell(r, "+"+strconv.Itoa(g.pgid))
	r.pruneLocked(false)
}

// pruneLocked forgets the groups whose leader has been waited for and which have no process
// left (deep: no process but zombies, which costs a look through /proc), and arms the sweep
// while such a group still has some. A group of zombies is safe to forget: nothing in it
// can be signalled, and its id is not given to anyone before they are reaped. r.mu is held.
func (r *registry) pruneLocked(deep bool) {
	pending := false
	for id, g := range r.groups {
		if !g.waited {
			continue
		}
		if !groupGone(id) && (!deep || hasLiveMember(id)) {
			pending = true
			continue
		}
		g.released = true
		delete(r.groups, id)
		r.dog.tell(r, "-"+strconv.Itoa(id))
	}
	switch {
	case pending && r.sweep == nil:
		r.sweep = time.AfterFunc(sweepEvery, r.sweepNow)
	case pending:
		r.sweep.Reset(sweepEvery)
	case r.sweep != nil:
		r.sweep.Stop()
		r.sweep = nil
	}
}

func (r *registry) sweepNow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(true)
}

// groupGone reports whether no process is left in the group (one we may not signal counts
// as there).
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

func (r *registry) killAll(grace time.Duration) int {
	r.mu.Lock()
	r.pruneLocked(true)
	ids := make([]int, 0, len(r.groups))
	for id := range r.groups {
		ids = append(ids, id)
		_ = syscall.Kill(-id, syscall.SIGTERM)
	}
	r.mu.Unlock()
	if len(ids) == 0 {
		return 0
	}
	// Background processes are not our children: polling is the only way to see them go.
	deadline := time.Now().Add(grace)
	for grace > 0 && time.Now().Before(deadline) && !r.allGone(ids) {
		time.Sleep(5 * time.Millisecond)
	}
	r.mu.Lock()
	for _, id := range ids {
		if g := r.groups[id]; g != nil && !g.released {
			_ = syscall.Kill(-id, syscall.SIGKILL)
		}
	}
	r.pruneLocked(true)
	r.mu.Unlock()
	return len(ids)
}

// allGone reports whether every group of ids is empty or holds only zombies.
func (r *registry) allGone(ids []int) bool {
	for _, id := range ids {
		if !groupGone(id) && hasLiveMember(id) {
			return false
		}
	}
	return true
}

// watchdog is a small shell that outlives pid by a moment: it reads the ids of the live
// groups from a pipe and, when the pipe ends because pid is gone however it ended (SIGKILL
// included), sends SIGKILL to each. The parent-death signal only reaches pid's own children;
// this reaches what they started. It runs in a process group of its own (so a terminal's
// Ctrl-C, which pid handles, does not end it) and ignores SIGINT and SIGHUP.
type watchdog struct {
	cmd *exec.Cmd
	w   *os.File // the pipe's write end; nil when no watchdog runs
	// broken is set when the watchdog could not start: groups are then not protected
	// against a SIGKILL of pid, and it is not tried again.
	broken bool
}

// watchdogScript keeps the live group ids in $g (" 12 34 "); at end of input, kills them.
// (dash's kill takes no "--": "kill -9 -ID" names the group.)
const watchdogScript = `trap '' INT HUP
g=' '
while IFS= read -r l; do
	case $l in
	+*) g="$g${l#+} " ;;
	-*) n=${l#-}; case $g in *" $n "*) g="${g%% $n *} ${g#* $n }" ;; esac ;;
	esac
done
for p in $g; do kill -9 "-$p" 2>/dev/null; done`

// tell sends one line ("+ID" or "-ID") to the watchdog, starting it when needed (with every
// live group); a watchdog that went away is started again. r.mu is held.
func (d *watchdog) tell(r *registry, line string) {
	if d.broken {
		return
	}
	if d.w != nil {
		if _, err := d.w.WriteString(line + "\n"); err == nil {
			return
		}
		// It went away: reap it and start another, which learns every live group.
		d.w.Close()
		_ = d.cmd.Wait()
		d.w, d.cmd = nil, nil
	}
	if err := d.start(); err != nil {
		d.broken = true
		return
	}
	var b []byte
	for id, g := range r.groups {
		if !g.released {
			b = fmt.Appendf(b, "+%d\n", id)
		}
	}
	if _, err := d.w.Write(b); err != nil {
		d.broken = true
	}
}

// start starts the watchdog. Its stdin is the pipe's read end; pid keeps the write end,
// which no other child inherits (close-on-exec), so it ends exactly when pid does.
func (d *watchdog) start() error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = pr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return err
	}
	d.cmd, d.w = cmd, pw
	return nil
}

// spawn starts the children that have a parent-death signal.
var spawn spawner

// spawner starts children on one OS thread that it holds while any of them runs. On Linux
// the parent-death signal fires when the *thread* that forked the child ends, not the
// process, and the Go runtime ends a thread when a goroutine locked to it (LockOSThread)
// returns without unlocking: any thread that ran some goroutine could be locked and ended
// that way later. So every child is forked from the spawner's goroutine, locked to its
// thread for as long as a child it started has not been waited for; the thread cannot be
// taken or ended meanwhile. When the last of its children has been waited for, the goroutine
// unlocks and returns (so tests see no goroutine left), and the next start makes another.
type spawner struct {
	// mu guards the fields below it.
	mu   sync.Mutex
	reqs chan spawnReq // the running spawner's requests; nil when none runs
	live int           // children of the running spawner not yet waited for
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// start starts cmd on the spawner's thread, starting the spawner if none runs.
func (s *spawner) start(cmd *exec.Cmd) error {
	s.mu.Lock()
	if s.reqs == nil {
		s.reqs = make(chan spawnReq)
		go spawnLoop(s.reqs)
	}
	s.live++
	reqs := s.reqs
	s.mu.Unlock()
	errc := make(chan error, 1)
	reqs <- spawnReq{cmd, errc}
	err := <-errc
	if err != nil {
		s.done()
	}
	return err
}

// done records that one child of the spawner has been waited for (or failed to start).
func (s *spawner) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live--
	if s.live == 0 {
		close(s.reqs)
		s.reqs = nil
	}
}

// spawnLoop is the spawner's goroutine: it forks every request from its own thread.
func spawnLoop(reqs <-chan spawnReq) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for r := range reqs {
		r.errc <- r.cmd.Start()
	}
}
