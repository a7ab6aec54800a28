// This file holds the commands on the ACP face: available_commands_update after
// session/new (once its answer is out), session/load and session/resume, and again at a
// prompt when the list changed (a command file added, a folder trusted since); a prompt
// whose text starts with /NAME runs the command, and what a command shows the person comes
// as an agent_message_chunk, with _meta.pid.command in the prompt's answer
// (docs/acp.md, "Commands").

package acp

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/pid-agent/pid/internal/watch"
	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

// availableCommandsUpdate is ACP's available_commands_update: session.CommandInfo has
// AvailableCommand's shape (name, description, input {hint}).
type availableCommandsUpdate struct {
	SessionUpdate     string                `json:"sessionUpdate"`
	AvailableCommands []session.CommandInfo `json:"availableCommands"`
}

// sendCommands sends available_commands_update with the session's commands (read again
// from disk) when always is set or they changed since the last one sent; always also has
// the session's command folders watched. Contract: st.mu is held; called at a prompt's
// start, after session/new's answer, in session/load and resume, and by the watch (an
// update outside a turn, as a mode change's).
func (st *sessionState) sendCommands(always bool) {
	cmds := st.ss.Commands()
	prev, ok := st.srv.commandsSent.Load(st.ss.ID())
	if !always && ok && session.SameCommands(prev.([]session.CommandInfo), cmds) {
		return
	}
	if always {
		// Watched before the client hears the list: a change it makes then is seen.
		st.srv.commandsWatch.watch(st.srv, st.ss.Cwd())
	}
	st.srv.commandsSent.Store(st.ss.ID(), cmds)
	st.update(availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds})
}

// commandsWatch watches the folders commands come from (the user's commands folder and
// each session cwd's .pid/commands, with their parents, so that a folder made later is
// seen), and on a change tells every live session whose list changed: clients learn of a
// command file added without waiting for the next prompt. A folder that does not exist
// yet is watched through its parent once that exists.
type commandsWatch struct {
	// mu guards the fields below it.
	mu     sync.Mutex
	sub    *watch.Sub
	dirs   map[string]bool // the folders to watch (added again after a change)
	kick   chan struct{}   // a change happened (buffered, 1)
	done   chan struct{}   // closed when the goroutine has ended
	closed bool
}

// watch adds the command folders of sessions in cwd (and the user's) to the watch, which
// starts with the first session. A watch that cannot be set up is logged; prompts still
// read the folders again. Contract: any goroutine but the watch's own.
func (w *commandsWatch) watch(s *server, cwd string) {
	dirs := []string{filepath.Join(cwd, ".pid"), filepath.Join(cwd, ".pid", "commands")}
	if cfg, err := xdg.ConfigDir(); err == nil {
		dirs = append(dirs, cfg, filepath.Join(cfg, "commands"))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.sub == nil {
		w.kick, w.done, w.dirs = make(chan struct{}, 1), make(chan struct{}), map[string]bool{}
		kick := w.kick
		sub, err := watch.Subscribe(func(fsnotify.Event) {
			select {
			case kick <- struct{}{}:
			default:
			}
		}, func(err error) { s.log.Debug("watching the command folders", "err", err) })
		if err != nil {
			s.log.Warn("the command folders are not watched (commands are read again at each prompt)", "err", err)
			w.closed = true
			return
		}
		w.sub = sub
		go w.run(s)
	}
	for _, d := range dirs {
		if !w.dirs[d] {
			w.dirs[d] = true
			_ = w.sub.Add(d) // a folder that does not exist yet is added after a change
		}
	}
}

// run tells the sessions of each change, until close.
func (w *commandsWatch) run(s *server) {
	defer close(w.done)
	for range w.kick {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		for d := range w.dirs {
			_ = w.sub.Add(d) // re-arm, and add what was made since
		}
		w.mu.Unlock()
		s.mu.Lock()
		live := make([]*sessionState, 0, len(s.sessions))
		for _, st := range s.sessions {
			live = append(live, st)
		}
		s.mu.Unlock()
		for _, st := range live {
			if _, told := s.commandsSent.Load(st.ss.ID()); !told {
				continue // session/new's answer is not out yet: it sends them
			}
			st.mu.Lock()
			if !st.closing {
				st.sendCommands(false)
			}
			st.mu.Unlock()
		}
	}
}

// close ends the watch and waits for its goroutine. Contract: called once the connection
// has ended.
func (w *commandsWatch) close() {
	w.mu.Lock()
	if w.closed || w.sub == nil {
		w.closed = true
		w.mu.Unlock()
		return
	}
	w.closed = true
	sub, kick, done := w.sub, w.kick, w.done
	w.mu.Unlock()
	sub.Close()
	close(kick)
	<-done
}

// commandsAfterNew has session/new's available_commands_update sent right after its
// answer: the client knows the session only once it has the answer. Contract: called by
// sessionNew on the read loop.
func (s *server) commandsAfterNew(st *sessionState) {
	s.afterReply = append(s.afterReply, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.sendCommands(true)
	})
}

// runAfterReply runs the work quick methods left for after their answer (rpcconn's
// AfterQuick, on the read loop).
func (s *server) runAfterReply() {
	for _, f := range s.afterReply {
		f()
	}
	s.afterReply = s.afterReply[:0]
}

// commandDone is _meta.pid.command of a prompt's answer that ran a command.
type commandDone struct {
	Name string `json:"name"`
	// Output is what the person was shown; absent when the command prompted the model.
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// promptOrCommand runs a prompt's turn: first the commands are read again (and the client
// told when they changed); then a prompt naming a command runs it, and any other prompt
// runs the model. A command that answers by itself shows its output as an
// agent_message_chunk and enters nothing in the transcript; after /model the client gets
// the options with the new model (config_option_update). cmd is set when a command ran.
// Contract: the turn is open (st.open), on the prompt's goroutine.
func (st *sessionState) promptOrCommand(ctx context.Context, user llm.Message) (res session.PromptResult, cmd *commandDone, err error) {
	st.mu.Lock()
	st.sendCommands(false)
	st.mu.Unlock()
	call, ok := st.ss.FindCommand(user)
	if !ok {
		res, err = st.ss.Prompt(ctx, []llm.Message{user})
		return res, nil, err
	}
	out, err := st.ss.RunCommand(ctx, call, user)
	if err != nil {
		return out.Result, nil, err
	}
	cmd = &commandDone{Name: out.Name, Output: out.Output, IsError: out.IsError}
	if out.Prompted {
		return out.Result, cmd, nil
	}
	st.mu.Lock()
	if out.Output != "" {
		st.update(contentChunk{SessionUpdate: "agent_message_chunk", Content: textBlock(out.Output)})
	}
	if out.Name == "model" && call.Args != "" && !out.IsError {
		st.update(configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: configOptions(st.host, st.ss)})
	}
	st.mu.Unlock()
	return session.PromptResult{StopReason: llm.StopEnd}, cmd, nil
}

// commandAnswer is a prompt's answer that ran a command.
type commandAnswer struct {
	*promptResult
	Meta struct {
		PID struct {
			Command *commandDone `json:"command"`
		} `json:"pid"`
	} `json:"_meta"`
}

// withCommand returns the prompt's answer r, with _meta.pid.command when a command ran.
func withCommand(r *promptResult, cmd *commandDone) any {
	if cmd == nil {
		return r
	}
	a := &commandAnswer{promptResult: r}
	a.Meta.PID.Command = cmd
	return a
}
