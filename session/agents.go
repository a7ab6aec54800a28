// This file gives task the person's agent files (package agents finds them): the agents
// in use join explore and general in task's enum, each described in its description; a
// task call naming one runs a child with the agent's tools (from the parent's, never
// more), model (from the person's models list, else the parent's) and prompt (after
// pid's subagent prompt).

package session

import (
	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/task"
)

// usedAgents returns the agents in use now (for task's enum: the tool list is fixed for
// the session's life, so an agent added later is there in the next session).
func (s *Session) usedAgents() []agents.Agent { return agents.InUse(s.Agents()) }

// agentFor returns the agent in use named name, read again now; an error result when it
// is gone since the session started.
func (s *Session) agentFor(name string) (*agents.Agent, []string, error) {
	def, gone := agents.Named(s.Agents(), name)
	if gone != "" {
		return nil, nil, task.Failure(gone)
	}
	return &def, nil, nil
}

// activeToolNames returns the names of the session's active tools, in its order.
func (s *Session) activeToolNames() []string {
	var out []string
	for _, t := range s.Tools() {
		out = append(out, t.Name)
	}
	return out
}

// agentModel returns the model configuration of a defined agent's child: nil for the
// parent's (the file names none, inherit, or a model not in the person's list: warning
// then says so).
func (s *Session) agentModel(def *agents.Agent) (*ModelConfig, string) {
	parent := s.currentModel().Config
	if parent == nil {
		return nil, "" // no model to inherit: the child has none either (no list to read)
	}
	list, err := s.host.ModelList(s.id, nil)
	if err != nil {
		return nil, ""
	}
	return s.host.modelSettings().ForAgent(s.ws.Cwd(), def, parent, list)
}
