// Package toolexec runs the tool calls of one assistant message through the three-stage
// pipeline of docs/pipeline-rules.md: prepare (serial, in source order), execute and
// finalize (concurrent in parallel mode), then the tool-result messages in source order.
//
// The entry point is Run, which executes one Batch under a Config and returns its Outcome.
// Tools are described by Tool, gathered and compiled once into a Toolbox, and made visible
// to a point of the transcript by an ActiveSet (R12). RejectTruncated fails the calls of a
// message cut off by the output-token limit (R3).
//
// This file holds the tool contract and the Toolbox.
package toolexec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// Mode is how the prepared calls of a batch execute.
type Mode string

const (
	Parallel   Mode = "parallel"   // the default
	Sequential Mode = "sequential" // one call's whole pipeline after another (R15)
)

// Result is what a tool returns.
type Result struct {
	Content []llm.Content
	Details any
	// Terminate asks the loop to stop after this batch; it takes effect only when every
	// call of the batch asks it (R16).
	Terminate bool
	// AddedToolNames activates these tools from the tool-result message on (R12).
	AddedToolNames []string
}

// TextResult returns a result with one text block.
func TextResult(text string) Result { return Result{Content: []llm.Content{llm.Text(text)}} }

// Call is a tool call after preparation: the arguments after PrepareArguments, and their
// decoded form, which has passed the tool's schema.
type Call struct {
	ID   string
	Name string
	// Args is the raw JSON of the arguments after PrepareArguments.
	Args json.RawMessage
	// Value is Args decoded (numbers as json.Number) and validated.
	Value any
}

// Decode unmarshals the call's arguments into v.
func (c Call) Decode(v any) error { return json.Unmarshal(c.Args, v) }

// Tool is one tool the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; nil means any JSON object.
	Parameters json.RawMessage
	// ExecutionMode "sequential" makes every batch that calls this tool sequential (R2).
	ExecutionMode Mode

	// PrepareArguments, if set, rewrites the raw arguments before validation (R6), for
	// compatibility shims.
	//
	// Contract: called during the serial prepare pass, never concurrently for one batch.
	// Returns the arguments to validate (args itself when nothing changes) or an error that
	// becomes the call's error result. A panic is caught and reported the same way.
	PrepareArguments func(args json.RawMessage) (json.RawMessage, error)

	// Check, if set, may refuse a validated call before beforeToolCall is asked, so that
	// nobody is asked to approve a call the tool would refuse anyway (edit of a file not
	// read yet). It runs after PrepareArguments and validation (R6), in the prepare pass.
	//
	// Contract: called during the serial prepare pass, never concurrently for one batch; it
	// must not block on I/O beyond a stat and must not change anything. A non-nil error
	// ends the call with an error result whose text is the error's, as it is (the tool's
	// own words to the model). A panic is caught and becomes an error result naming the
	// tool.
	Check func(call Call) error

	// Resources, if set, names what a prepared call touches (for file tools, the cleaned
	// path). In parallel mode calls that share a resource run in source order while others
	// stay parallel (C3).
	//
	// Contract: called during the prepare pass after validation; must be quick and pure.
	// A panic is caught and turns the call into an error result.
	Resources func(call Call) []string

	// Unavailable, when set, says why a catalog tool cannot be called now (its server is
	// starting, failed, or no longer offers it): the tool is listed as active, not offered to
	// the model, and a call to it gets an error result with this text (see Catalog).
	Unavailable string

	// Slots, if set, caps how many calls of this tool (and of the other tools sharing the
	// pool) execute at once, across batches and sessions; the calls beyond it wait before
	// execution, in the order they were prepared, and get their ToolExecutionStart when they
	// start. nil means no cap.
	Slots *Slots

	// Settle, if set, is a step the calls of this tool (and of the other tools sharing it)
	// wait for together once they have all executed, before their afterToolCall (R18): the
	// daemon asks for the diagnostics of the files a batch's edits changed in one request.
	// nil costs nothing.
	Settle *Settle

	// View, if set, says how a call of this tool is shown to a person (see View): from its
	// arguments at the call's start (details nil), and with its result's details once it
	// ended without error, when the view lists the files the call changed. nil: the tool's
	// name, of kind other (ViewOf).
	//
	// Contract: pure and quick, any goroutine; args may be any bytes (a call is shown before
	// it is validated), and details the tool's own value or, from a saved session, its JSON
	// decoded into maps.
	View func(args json.RawMessage, details any) View

	// Execute runs the call.
	//
	// Contract: called at most once per call, concurrently with other calls of the batch in
	// parallel mode. ctx is cancelled when the run is aborted: a tool must then return
	// promptly. onUpdate reports progress (R9); it may be called from any goroutine until
	// Execute returns, and calls after that are dropped. A failure is returned as an error
	// (or, for a tool that wants to shape it, as Content with the error set by an
	// afterToolCall hook); a panic is caught and becomes an error result (R10).
	Execute func(ctx context.Context, call Call, onUpdate func(event.Result)) (Result, error)
}

// entry is a tool with its schema compiled once.
type entry struct {
	tool   Tool
	schema *jsonschema.Schema
	// fast, when the schema is in the subset it understands, accepts valid arguments
	// without the library (see flatschema.go).
	fast *fastNode
	spec llm.ToolSpec
	// quick reports whether the tool's last call in parallel mode executed in under
	// quickCall: its next calls in a parallel batch then run on the batch's goroutine
	// (see runConcurrently).
	quick atomic.Bool
}

// Toolbox is the set of every tool a session knows, active or not, with schemas compiled.
// It is immutable after NewToolbox and safe for concurrent use.
type Toolbox struct {
	byName map[string]*entry
	names  []string
	// catalog, when set, supplies tools that come and go (see Catalog).
	catalog Catalog
}

var anyObject = json.RawMessage(`{"type":"object"}`)

// NewToolbox compiles each tool's schema once. It fails on a duplicate or empty name, a
// missing Execute, or a schema that does not compile.
func NewToolbox(tools ...Tool) (*Toolbox, error) {
	tb := &Toolbox{byName: make(map[string]*entry, len(tools))}
	for _, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("toolexec: a tool has no name")
		}
		if _, dup := tb.byName[t.Name]; dup {
			return nil, fmt.Errorf("toolexec: tool %q is defined twice", t.Name)
		}
		if t.Execute == nil {
			return nil, fmt.Errorf("toolexec: tool %q has no Execute", t.Name)
		}
		switch t.ExecutionMode {
		case "", Parallel, Sequential:
		default:
			return nil, fmt.Errorf("toolexec: tool %q: executionMode %q is neither %q nor %q", t.Name, t.ExecutionMode, Parallel, Sequential)
		}
		params := t.Parameters
		if len(params) == 0 {
			params = anyObject
		}
		sch, err := compileSchema(t.Name, params)
		if err != nil {
			return nil, err
		}
		tb.byName[t.Name] = &entry{tool: t, schema: sch.lib, fast: sch.fast, spec: llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}}
		tb.names = append(tb.names, t.Name)
	}
	return tb, nil
}

// schemaCache holds compiled schemas by tool name and parameters, so that the sessions of a
// daemon share one compiled schema per tool instead of compiling the built-in tools' again
// for every session (three quarters of an idle session's memory). A compiled Schema is
// immutable and safe for concurrent validation. The cache stops growing at maxCachedSchemas.
var schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiled
}

// compiled is a tool's schema compiled for the library and, when it can be, for the fast
// check.
type compiled struct {
	lib  *jsonschema.Schema
	fast *fastNode
}

const maxCachedSchemas = 1024

func compileSchema(name string, params json.RawMessage) (*compiled, error) {
	key := name + "\x00" + string(params)
	schemaCache.mu.Lock()
	sch := schemaCache.m[key]
	schemaCache.mu.Unlock()
	if sch != nil {
		return sch, nil
	}
	lib, err := compileSchemaUncached(name, params)
	if err != nil {
		return nil, err
	}
	sch = &compiled{lib: lib, fast: compileFast(params)}
	schemaCache.mu.Lock()
	if schemaCache.m == nil {
		schemaCache.m = map[string]*compiled{}
	}
	if len(schemaCache.m) < maxCachedSchemas {
		schemaCache.m[key] = sch
	}
	schemaCache.mu.Unlock()
	return sch, nil
}

func compileSchemaUncached(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("toolexec: tool %q: parameters are not valid JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("toolexec: tool %q: %v", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("toolexec: tool %q: parameters are not a valid JSON Schema: %v", name, err)
	}
	return sch, nil
}

// Names returns the names of all tools in the order they were given.
func (tb *Toolbox) Names() []string { return append([]string(nil), tb.names...) }

// Tool returns the tool named name and whether there is one.
func (tb *Toolbox) Tool(name string) (Tool, bool) {
	e, ok := tb.byName[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// ActiveSet is the set of tools visible at one point of a transcript (R12). It is immutable:
// With returns a new set, so a set can be kept as the snapshot of its point. The tools of a
// catalog it activated are looked up as they are now (a server's tool list changes).
type ActiveSet struct {
	box     *Toolbox
	entries map[string]*entry
	order   []string // names in Toolbox order
	specs   []llm.ToolSpec
	// dyn holds the activated names the catalog supplies, in activation order.
	dyn []string
	*catalogState
}

// Activate returns the set of the named tools. Names the toolbox does not know are returned
// in unknown and otherwise ignored.
func (tb *Toolbox) Activate(names ...string) (set *ActiveSet, unknown []string) {
	return (&ActiveSet{box: tb, catalogState: &catalogState{}}).With(names)
}

// With returns the set plus the named tools. Unknown names are returned and ignored; when
// nothing is added the receiver itself is returned.
func (a *ActiveSet) With(names []string) (set *ActiveSet, unknown []string) {
	var add []*entry
	var dyn []string
	for _, n := range names {
		e, ok := a.box.byName[n]
		switch {
		case ok && a.entries[n] == nil:
			add = append(add, e)
		case ok:
		case a.box.catalog != nil && !slices.Contains(a.dyn, n) && !slices.Contains(dyn, n):
			if _, known := a.box.catalog.Lookup(n); known {
				dyn = append(dyn, n)
			} else {
				unknown = append(unknown, n)
			}
		case a.box.catalog != nil:
		default:
			unknown = append(unknown, n)
		}
	}
	if len(add) == 0 && len(dyn) == 0 && a.entries != nil {
		return a, unknown
	}
	next := &ActiveSet{box: a.box, entries: make(map[string]*entry, len(a.entries)+len(add)), dyn: append(slices.Clip(a.dyn), dyn...), catalogState: &catalogState{}}
	for n, e := range a.entries {
		next.entries[n] = e
	}
	for _, e := range add {
		next.entries[e.tool.Name] = e
	}
	for _, n := range a.box.names {
		if e := next.entries[n]; e != nil {
			next.order = append(next.order, n)
			next.specs = append(next.specs, e.spec)
		}
	}
	return next, unknown
}

// Toolbox returns the toolbox the set draws from.
func (a *ActiveSet) Toolbox() *Toolbox { return a.box }

// Has reports whether the tool named name is active.
func (a *ActiveSet) Has(name string) bool { return a.lookup(name) != nil }

// lookup returns the active tool named name, or nil: the toolbox's, else the catalog's as
// it is now.
func (a *ActiveSet) lookup(name string) *entry {
	if a == nil {
		return nil
	}
	if e := a.entries[name]; e != nil || a.box.catalog == nil {
		return e
	}
	return a.view().byName[name]
}

// Names returns the active tools' names: the toolbox's in toolbox order, then the catalog's.
func (a *ActiveSet) Names() []string {
	if a.box.catalog == nil {
		return append([]string(nil), a.order...)
	}
	return slices.Clone(a.view().names)
}

// Tools returns the active tools in the order of Names; catalog tools that cannot be called
// now have Unavailable set. The names and the tools come from one view of the catalog: a
// server that fails or changes its tools meanwhile is seen either wholly or not at all.
func (a *ActiveSet) Tools() []Tool {
	if a.box.catalog == nil {
		out := make([]Tool, len(a.order))
		for i, n := range a.order {
			out[i] = a.entries[n].tool
		}
		return out
	}
	v := a.view()
	out := make([]Tool, len(v.names))
	for i, n := range v.names {
		e := a.entries[n]
		if e == nil {
			e = v.byName[n]
		}
		out[i] = e.tool
	}
	return out
}

// Specs returns what the model is told about the active tools, in the order of Names,
// leaving out catalog tools that cannot be called now. The slice is shared: callers must
// not modify it.
func (a *ActiveSet) Specs() []llm.ToolSpec {
	if a.box.catalog == nil {
		return a.specs
	}
	return a.view().specs
}

// Replay returns the active set after each message of transcript, starting from initial:
// sets[i] is what is active once message i has been added, so a model call made after
// message i sees sets[i]. Tool-result messages with addedToolNames activate those tools
// from that message on (R12). Replaying the same transcript always yields the same sets.
func Replay(initial *ActiveSet, transcript []llm.Message) []*ActiveSet {
	sets := make([]*ActiveSet, len(transcript))
	cur := initial
	for i := range transcript {
		m := &transcript[i]
		if m.Role == llm.RoleToolResult && len(m.AddedToolNames) > 0 {
			cur, _ = cur.With(m.AddedToolNames)
		}
		sets[i] = cur
	}
	return sets
}
