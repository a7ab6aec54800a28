// This file holds ACP's agent methods: initialize, authenticate, session/new and
// session/prompt, and the conversion of a prompt's content blocks into pid's user message.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/session"
)

type initializeParams struct {
	ProtocolVersion    *json.Number `json:"protocolVersion"`
	ClientCapabilities struct {
		FS struct {
			ReadTextFile  bool `json:"readTextFile"`
			WriteTextFile bool `json:"writeTextFile"`
		} `json:"fs"`
		Terminal bool            `json:"terminal"`
		Auth     json.RawMessage `json:"auth"`
		Meta     json.RawMessage `json:"_meta"`
		Session  *struct {
			Notices    json.RawMessage `json:"notices"`
			Compaction json.RawMessage `json:"compaction"`
		} `json:"session"`
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
		} `json:"elicitation"`
	} `json:"clientCapabilities"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethod      `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

type agentCapabilities struct {
	LoadSession        bool `json:"loadSession"`
	PromptCapabilities struct {
		Image           bool `json:"image"`
		Audio           bool `json:"audio"`
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"promptCapabilities"`
	MCPCapabilities struct {
		HTTP bool `json:"http"`
		SSE  bool `json:"sse"`
	} `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

// sessionCapabilities are the session methods pid takes besides the baseline ones; {} says
// "supported", and an absent member "not supported".
type sessionCapabilities struct {
	List   *struct{} `json:"list,omitempty"`
	Resume *struct{} `json:"resume,omitempty"`
	Close  *struct{} `json:"close,omitempty"`
	Delete *struct{} `json:"delete,omitempty"`
	// Fork is session/fork (unstable in ACP's schema).
	Fork *struct{} `json:"fork,omitempty"`
	// AdditionalDirectories: session/new, load, resume and fork take additionalDirectories.
	AdditionalDirectories *struct{} `json:"additionalDirectories,omitempty"`
}

// additionalFolders checks a request's additionalDirectories (each absolute, as ACP asks)
// and returns them clean; the session layer checks that each is a folder.
func additionalFolders(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: additionalDirectories[%d] must be an absolute path, not %q", errInvalidParams, i, d)
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// initialize records the client's capabilities and answers with protocol version 1,
// whatever version the client asked for: it is the only one pid speaks. Like the ACP SDK's
// own agents, pid takes initialize again later: the client's capabilities are replaced and
// the answer is the same.
func (s *server) initialize(p *initializeParams) (any, error) {
	if p.ProtocolVersion == nil {
		return nil, fmt.Errorf("%w: protocolVersion is required", errInvalidParams)
	}
	if v, err := p.ProtocolVersion.Int64(); err != nil || v < 0 || v > 65535 {
		return nil, fmt.Errorf("%w: protocolVersion must be an integer from 0 to 65535, not %s", errInvalidParams, p.ProtocolVersion.String())
	}
	s.setUp.Do(func() { s.host.SetUp(nil) })
	s.mu.Lock()
	s.initialized = true
	cc := p.ClientCapabilities
	s.caps = clientCaps{
		ReadTextFile:  cc.FS.ReadTextFile,
		WriteTextFile: cc.FS.WriteTextFile,
		Terminal:      cc.Terminal,
		Notices:       cc.Session != nil && declared(cc.Session.Notices),
		Compaction:    cc.Session != nil && declared(cc.Session.Compaction),
		ElicitForm:    cc.Elicitation != nil && declared(cc.Elicitation.Form),
	}
	s.mu.Unlock()
	res := &initializeResult{
		ProtocolVersion: ProtocolVersion,
		AuthMethods:     authMethods(terminalAuth(cc.Auth, cc.Meta)),
		AgentInfo:       implementation{Name: "pid", Title: "pid", Version: s.opts.Version},
	}
	// Images go to the model as image blocks; embedded text resources become context in
	// the user message. No audio. MCP servers over stdio (which every agent takes) and
	// streamable HTTP, not the old SSE transport. Saved sessions can be loaded, listed,
	// resumed and deleted when pid can use its sessions folder; a live session can always
	// be closed.
	res.AgentCapabilities.PromptCapabilities.Image = true
	res.AgentCapabilities.PromptCapabilities.EmbeddedContext = true
	res.AgentCapabilities.MCPCapabilities.HTTP = true
	sc := &res.AgentCapabilities.SessionCapabilities
	sc.Close, sc.AdditionalDirectories, sc.Fork = &struct{}{}, &struct{}{}, &struct{}{}
	if s.host.SavesSessions() {
		res.AgentCapabilities.LoadSession = true
		sc.List, sc.Resume, sc.Delete = &struct{}{}, &struct{}{}, &struct{}{}
	}
	return res, nil
}

// declared reports whether a client capability object is present (not absent nor null).
func declared(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

type sessionNewParams struct {
	Cwd        *string           `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// AdditionalDirectories are workspace folders besides the cwd (folders).
	AdditionalDirectories []string `json:"additionalDirectories"`
	Meta                  struct {
		PID *session.Config `json:"pid"`
		// SystemPrompt is a string that replaces pid's system prompt, or {append: string}
		// that adds to it (what acpx's --system-prompt and --append-system-prompt send).
		SystemPrompt json.RawMessage `json:"systemPrompt"`
	} `json:"_meta"`
}

type sessionNewResult struct {
	SessionID     string         `json:"sessionId"`
	Modes         *modeState     `json:"modes"`
	ConfigOptions []configOption `json:"configOptions"`
}

// metaSystemPrompt sets cfg's systemPrompt (raw a string) or appendSystemPrompt (raw
// {"append": string}) from _meta.systemPrompt; nothing when raw is absent or null.
func metaSystemPrompt(raw json.RawMessage, cfg *session.Config) error {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var replace string
	if json.Unmarshal(raw, &replace) == nil {
		cfg.SystemPrompt = replace
		return nil
	}
	var add struct {
		Append *string `json:"append"`
	}
	if json.Unmarshal(raw, &add) != nil || add.Append == nil {
		return fmt.Errorf(`%w: _meta.systemPrompt is a string (it replaces pid's system prompt) or {"append": string} (added to it)`, errInvalidParams)
	}
	cfg.AppendSystemPrompt = *add.Append
	return nil
}

// sessionNew makes a session whose cwd (required, absolute, an existing folder) is its
// working folder and its only workspace folder (see server.host). mcpServers are the client's
// MCP servers (see mcpServersConfig): their tools join the session's catalog, found through
// tool_search. _meta.pid holds pid's own settings (model, toolExecution, permissions,
// scriptedTools, systemPrompt, mcpServers in the settings files' shape), as in the native
// session/new; _meta.systemPrompt replaces (a string) or extends ({append}) the system
// prompt (_meta.pid.mode its mode). The answer has the session's modes and configOptions
// (config.go).
func (s *server) sessionNew(p *sessionNewParams) (any, error) {
	switch {
	case p.Cwd == nil || *p.Cwd == "":
		return nil, fmt.Errorf("%w: cwd is required (an absolute path)", errInvalidParams)
	case !filepath.IsAbs(*p.Cwd):
		return nil, fmt.Errorf("%w: cwd must be an absolute path, not %q", errInvalidParams, *p.Cwd)
	}
	var cfg session.Config
	if p.Meta.PID != nil {
		cfg = *p.Meta.PID
	}
	if err := metaSystemPrompt(p.Meta.SystemPrompt, &cfg); err != nil {
		return nil, err
	}
	cfg.Cwd = filepath.Clean(*p.Cwd)
	if fi, err := os.Stat(cfg.Cwd); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: cwd %q is not a folder", errInvalidParams, cfg.Cwd)
	}
	servers, err := mcpServersConfig(p.MCPServers, cfg.MCPServers, cfg.Cwd)
	if err != nil {
		return nil, err
	}
	cfg.MCPServers = servers
	folders, err := additionalFolders(p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	id := session.NewID()
	ss, err := s.host.New(cfg, session.Options{Face: s, ID: id, Files: s.editorFiles(id), Terminals: s.editorTerminals(id), ModeChanged: s.modeChanged, Folders: folders})
	if err != nil {
		return nil, err
	}
	if err := keyProblem(ss); err != nil {
		// auth_required now rather than at the first prompt; the session goes.
		if cerr := s.host.CloseSession(ss.ID()); cerr != nil {
			s.log.Warn("closing a session refused for want of a key", "session", ss.ID(), "err", cerr)
		}
		return nil, err
	}
	st := &sessionState{srv: s, ss: ss, mcpOwn: servers}
	s.mu.Lock()
	s.sessions[ss.ID()] = st
	s.mu.Unlock()
	commands := commandsAfter(st)
	return rpcconn.Then(&sessionNewResult{SessionID: ss.ID(), Modes: modes(ss), ConfigOptions: configOptions(s.host, ss)}, func() {
		commands()
		st.mu.Lock()
		defer st.mu.Unlock()
		st.trustNotice()
	}), nil
}

type promptParams struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

type promptResult struct {
	StopReason string `json:"stopReason"`
}

// sessionPrompt runs one turn loop. Its updates are written before its response and none
// after it (see sessionState.finish).
func (s *server) sessionPrompt(p *promptParams) (rpcconn.Work, error) {
	if p.SessionID == "" {
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	}
	s.mu.Lock()
	st := s.sessions[p.SessionID]
	s.mu.Unlock()
	if st == nil {
		return nil, notFound(p.SessionID, "no session %q is active in this pid (session/load or session/resume makes a saved one active)", p.SessionID)
	}
	user, err := userMessage(p.Prompt)
	if err != nil {
		return nil, err
	}
	t, err := st.open()
	if errors.Is(err, errClosing) {
		return nil, notFound(p.SessionID, "session %s is being closed", p.SessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: a prompt is already running in session %s; cancel it with session/cancel or wait for its answer", errInvalidRequest, p.SessionID)
	}
	return func(ctx context.Context, reply func(any, error)) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		t.setCancel(cancel)
		// The turn closes and the prompt is answered whatever happens, a panic included.
		var result any
		err := error(fmt.Errorf("%w: the turn ended abnormally (see pid's log)", errInternal))
		defer func() { st.finish(t, func() { reply(result, err) }) }()
		var res session.PromptResult
		var cmd *commandDone
		res, cmd, err = st.promptOrCommand(ctx, user)
		switch {
		case t.cancelled() || ctx.Err() != nil:
			// ACP: a cancelled turn answers "cancelled", even if cancelling made something fail.
			result, err = &promptResult{StopReason: "cancelled"}, nil
		case err != nil:
		default:
			var reason string
			if reason, err = stopReason(res.StopReason, res.Messages); err == nil {
				result = withCommand(&promptResult{StopReason: reason}, cmd)
			}
		}
	}, nil
}

// stopReason maps the loop's stop reason onto ACP's. A failed model call is an error
// response carrying the provider's message.
func stopReason(r llm.StopReason, msgs []llm.Message) (string, error) {
	switch r {
	case llm.StopLength:
		return "max_tokens", nil
	case llm.StopAborted:
		return "cancelled", nil
	case llm.StopError:
		msg := "the model call failed"
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleAssistant && msgs[i].ErrorMessage != "" {
				msg = msgs[i].ErrorMessage
				break
			}
		}
		return "", fmt.Errorf("%w: %s", errInternal, msg)
	}
	// stop, and toolUse when a terminating batch ended the run.
	return "end_turn", nil
}

// contentBlock is an ACP ContentBlock as pid reads it from a prompt.
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *string `json:"blob"`
	} `json:"resource"`
}

// userMessage turns a prompt into one user message: text as text, images as images, a
// resource link as a Markdown link the model can follow with its tools, an embedded text
// resource as a context block with its URI.
func userMessage(prompt []json.RawMessage) (llm.Message, error) {
	if len(prompt) == 0 {
		return llm.Message{}, fmt.Errorf("%w: prompt must hold at least one content block", errInvalidParams)
	}
	content := make([]llm.Content, 0, len(prompt))
	for i, raw := range prompt {
		var b contentBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return llm.Message{}, fmt.Errorf("%w: prompt[%d]: %s", errInvalidParams, i, describeJSONError(err))
		}
		switch b.Type {
		case "text":
			content = append(content, llm.Text(b.Text))
		case "image":
			if b.Data == "" || b.MimeType == "" {
				return llm.Message{}, fmt.Errorf("%w: prompt[%d]: an image needs data and mimeType", errInvalidParams, i)
			}
			content = append(content, llm.Content{Type: llm.ContentImage, Data: b.Data, MimeType: b.MimeType})
		case "resource_link":
			if b.URI == "" {
				return llm.Message{}, fmt.Errorf("%w: prompt[%d]: a resource_link needs a uri", errInvalidParams, i)
			}
			content = append(content, llm.Text(fmt.Sprintf("[@%s](%s)", linkName(b.Name, b.URI), b.URI)))
		case "resource":
			r := b.Resource
			if r == nil || r.URI == "" {
				return llm.Message{}, fmt.Errorf("%w: prompt[%d]: a resource needs resource.uri", errInvalidParams, i)
			}
			if r.Text == nil {
				// A binary resource: the model gets the reference, not the bytes.
				content = append(content, llm.Text(fmt.Sprintf("[@%s](%s)", linkName("", r.URI), r.URI)))
				continue
			}
			content = append(content, llm.Text(fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.URI, *r.Text)))
		case "audio":
			return llm.Message{}, fmt.Errorf("%w: prompt[%d]: pid does not take audio (promptCapabilities.audio is false)", errInvalidParams, i)
		default:
			return llm.Message{}, fmt.Errorf("%w: prompt[%d]: unknown content block type %q", errInvalidParams, i, b.Type)
		}
	}
	return llm.Message{Role: llm.RoleUser, Content: content, Timestamp: llm.Now()}, nil
}

// linkName is a resource's name, else the last element of its URI's path.
func linkName(name, uri string) string {
	if name != "" {
		return name
	}
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		return filepath.Base(u.Path)
	}
	return strings.TrimSpace(uri)
}
