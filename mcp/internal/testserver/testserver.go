// Package testserver is the MCP server pid's tests talk to: one tool per behaviour the
// client must handle (plain text, progress, isError, a call that hangs until cancelled, a
// tool list that grows, a crash, elicitation (one question, or many at once), sampling,
// roots, annotations, rich content).
// It is built with the official Go SDK's server side, so the tests exercise the real wire
// protocol. cmd/pidtestmcp runs it over stdio or streamable HTTP.
package testserver

//lint:file-ignore SA1019 the test server asks for sampling and roots, which protocol 2026-07-28 deprecates but pid must still answer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options tunes a server for a test.
type Options struct {
	// Stderr receives what the crash tool writes before exiting; os.Stderr when nil.
	Stderr io.Writer
	// Exit ends the process for the crash tool; os.Exit when nil.
	Exit func(code int)
}

// childPid is the process id of the child a -stubborn server started (0: none).
var childPid int

// state is what the tools of one server share.
type state struct {
	opts Options
	srv  *sdk.Server
	// mu guards the fields below it.
	mu sync.Mutex
	// cancelled counts the hang calls that saw their cancellation; seen is closed (and
	// replaced) each time one does, to wake the waiters of the cancelled tool.
	cancelled int
	seen      chan struct{}
}

// New returns a server with every test tool.
//
// Contract: safe to call any number of times; each server has its own state (the count of
// cancelled hang calls, the tools grow added).
func New(o Options) *sdk.Server {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Exit == nil {
		o.Exit = os.Exit
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "pidtestmcp", Version: "1.0.0"}, nil)
	st := &state{opts: o, srv: srv, seen: make(chan struct{})}

	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo the given text back unchanged."}, st.echo)
	sdk.AddTool(srv, &sdk.Tool{Name: "progress", Description: "Send count progress notifications, then return."}, st.progress)
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Return an error result (isError) with the given message."}, st.fail)
	sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "Block until the call is cancelled; report progress once started."}, st.hang)
	sdk.AddTool(srv, &sdk.Tool{Name: "cancelled", Description: "Wait until a hang call has seen its cancellation and return how many have."}, st.waitCancelled)
	sdk.AddTool(srv, &sdk.Tool{Name: "grow", Description: "Add a tool with the given name (the server then sends tools/list_changed)."}, st.grow)
	sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Write the message to stderr and exit with status 3 at once."}, st.crash)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the user a question (elicitation) and return the answer."}, st.ask)
	sdk.AddTool(srv, &sdk.Tool{Name: "sample", Description: "Ask the client's model to complete a prompt (sampling)."}, st.sample)
	sdk.AddTool(srv, &sdk.Tool{Name: "roots", Description: "List the client's roots, one URI a line."}, st.roots)
	sdk.AddTool(srv, &sdk.Tool{
		Name:        "peek",
		Description: "Read-only lookup of a key.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Peek"},
	}, st.echo)
	sdk.AddTool(srv, &sdk.Tool{Name: "rich", Description: "Return one block of each content kind and structured content."}, st.rich)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Return the process id, working folder, an environment variable and the request's HTTP header."}, st.whoami)
	return srv
}

type textIn struct {
	Text string `json:"text,omitempty"`
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func (st *state) echo(_ context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

type progressIn struct {
	Count int `json:"count"`
}

func (st *state) progress(ctx context.Context, req *sdk.CallToolRequest, in progressIn) (*sdk.CallToolResult, any, error) {
	tok := req.Params.GetProgressToken()
	sent := 0
	for i := 1; i <= in.Count && tok != nil; i++ {
		err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: tok, Progress: float64(i), Total: float64(in.Count), Message: fmt.Sprintf("step %d", i),
		})
		if err != nil {
			return nil, nil, err
		}
		sent++
	}
	return text(fmt.Sprintf("sent %d", sent)), nil, nil
}

func (st *state) fail(_ context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	r := text(in.Text)
	r.IsError = true
	return r, nil, nil
}

func (st *state) hang(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	if tok := req.Params.GetProgressToken(); tok != nil {
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "hanging"})
	}
	<-ctx.Done()
	st.mu.Lock()
	st.cancelled++
	close(st.seen)
	st.seen = make(chan struct{})
	st.mu.Unlock()
	return nil, nil, ctx.Err()
}

func (st *state) waitCancelled(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	for {
		st.mu.Lock()
		n, seen := st.cancelled, st.seen
		st.mu.Unlock()
		if n > 0 {
			return text(fmt.Sprintf("cancelled %d", n)), nil, nil
		}
		select {
		case <-seen:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

type growIn struct {
	Name string `json:"name"`
}

func (st *state) grow(_ context.Context, _ *sdk.CallToolRequest, in growIn) (*sdk.CallToolResult, any, error) {
	sdk.AddTool(st.srv, &sdk.Tool{Name: in.Name, Description: "A tool grow added."}, st.echo)
	return text("added " + in.Name), nil, nil
}

func (st *state) crash(_ context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	fmt.Fprintln(st.opts.Stderr, "pidtestmcp: about to crash")
	fmt.Fprintln(st.opts.Stderr, in.Text)
	st.opts.Exit(3)
	return text("still alive"), nil, nil
}

// askIn is ask's input: count > 1 asks that many questions at once (see askMany).
type askIn struct {
	Text  string `json:"text,omitempty"`
	Count int    `json:"count,omitempty"`
}

func (st *state) ask(ctx context.Context, req *sdk.CallToolRequest, in askIn) (*sdk.CallToolResult, any, error) {
	if in.Count > 1 {
		return st.askMany(ctx, req, in.Count)
	}
	if resp, ok := req.Params.InputResponses["answer"].(*sdk.ElicitResult); ok {
		return text(fmt.Sprintf("action=%s answer=%v", resp.Action, resp.Content["answer"])), nil, nil
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"answer": &sdk.ElicitParams{
		Message: in.Text,
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"answer": map[string]any{"type": "string"}},
		},
	}}}, nil, nil
}

// askMany asks count questions at once, as a chatty server would: on protocol 2026-07-28
// as one round of count input requests, on older ones as count elicitation/create
// requests of their own. It reports how many answers were accept, decline and cancel, how
// many requests failed, and the first reason given (an error, or a cancel's
// _meta.pid.reason).
func (st *state) askMany(ctx context.Context, req *sdk.CallToolRequest, count int) (*sdk.CallToolResult, any, error) {
	var mu sync.Mutex
	var accepted, declined, cancelled, failed int
	var reason string
	tally := func(res *sdk.ElicitResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		why := ""
		switch {
		case err != nil:
			failed++
			why = err.Error()
		case res.Action == "accept":
			accepted++
		case res.Action == "decline":
			declined++
		default:
			cancelled++
			if pid, ok := res.Meta["pid"].(map[string]any); ok {
				why, _ = pid["reason"].(string)
			}
		}
		if reason == "" {
			reason = why
		}
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}
	done := func() (*sdk.CallToolResult, any, error) {
		return text(fmt.Sprintf("accepted %d, declined %d, cancelled %d, failed %d: %s", accepted, declined, cancelled, failed, reason)), nil, nil
	}
	if rs := req.Params.InputResponses; rs != nil {
		for _, r := range rs {
			res, _ := r.(*sdk.ElicitResult)
			if res == nil {
				tally(nil, fmt.Errorf("unexpected answer %T", r))
				continue
			}
			tally(res, nil)
		}
		return done()
	}
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion >= "2026-07-28" {
		irs := sdk.InputRequestMap{}
		for i := range count {
			irs[fmt.Sprintf("q%d", i+1)] = &sdk.ElicitParams{Message: fmt.Sprintf("question %d", i+1), RequestedSchema: schema}
		}
		return &sdk.CallToolResult{InputRequests: irs}, nil, nil
	}
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tally(req.Session.Elicit(ctx, &sdk.ElicitParams{Message: fmt.Sprintf("question %d", i+1), RequestedSchema: schema}))
		}()
	}
	wg.Wait()
	return done()
}

func (st *state) sample(_ context.Context, req *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses["completion"]; ok {
		switch r := resp.(type) {
		case *sdk.CreateMessageWithToolsResult:
			return &sdk.CallToolResult{Content: r.Content}, nil, nil
		case *sdk.CreateMessageResult:
			return &sdk.CallToolResult{Content: []sdk.Content{r.Content}}, nil, nil
		default:
			return nil, nil, fmt.Errorf("unexpected sampling answer %T", resp)
		}
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"completion": &sdk.CreateMessageParams{
		MaxTokens: 100,
		Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Text}}},
	}}}, nil, nil
}

func (st *state) roots(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses["roots"].(*sdk.ListRootsResult); ok {
		var uris []string
		for _, r := range resp.Roots {
			uris = append(uris, r.URI)
		}
		return text(strings.Join(uris, "\n")), nil, nil
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil, nil
}

// pngPixel is a 1x1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// PNG returns the bytes of the image the rich tool returns.
func PNG() []byte { return append([]byte(nil), pngPixel...) }

func (st *state) rich(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	return &sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: "plain text"},
			&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte("RIFF0000WAVE"), MIMEType: "audio/wav"},
			&sdk.ResourceLink{URI: "file:///srv/notes.md", Name: "notes", Description: "Meeting notes"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///srv/a.txt", MIMEType: "text/plain", Text: "embedded text"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///srv/b.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3, 4}}},
		},
		StructuredContent: map[string]any{"count": 6, "ok": true},
	}, nil, nil
}

type whoamiIn struct {
	Env    string `json:"env,omitempty"`
	Header string `json:"header,omitempty"`
}

func (st *state) whoami(_ context.Context, req *sdk.CallToolRequest, in whoamiIn) (*sdk.CallToolResult, any, error) {
	wd, _ := os.Getwd()
	out := map[string]any{"pid": os.Getpid(), "cwd": wd}
	if childPid != 0 {
		out["child"] = childPid
	}
	if in.Env != "" {
		out["env"] = os.Getenv(in.Env)
	}
	if in.Header != "" && req.Extra != nil && req.Extra.Header != nil {
		out["header"] = req.Extra.Header.Get(in.Header)
	}
	b, _ := json.Marshal(out)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: out}, nil, nil
}
