// This file holds Catalog: tools that come and go while a session lives (an MCP server's,
// which start in the background and change their list), looked up by name when a transcript
// activates them (R12) and when a call names them.

package toolexec

import (
	"slices"
	"sync"

	"github.com/pid-agent/pid/llm"
)

// Catalog supplies tools that are not fixed when a Toolbox is made. A Toolbox with a
// Catalog activates any name the catalog knows (addedToolNames, R12), resolves it when a
// call names it or the model is told the active tools, and always offers the catalog's
// Always tools.
type Catalog interface {
	// Lookup returns the tool now named name, and whether the catalog knows the name. A
	// known tool that cannot be called now (its server is starting, failed or no longer
	// offers it) comes back with Unavailable set: it stays active, is not offered to the
	// model, and a call to it gets an error result saying why.
	//
	// Contract: called from the loop's and the batches' goroutines, possibly concurrently;
	// must not block (no waiting for a server) and must not call back into toolexec.
	Lookup(name string) (Tool, bool)
	// Always returns the tools active at every point of every transcript (an eager
	// server's), in a stable order. Same contract as Lookup.
	Always() []Tool
	// Version changes whenever what Lookup or Always return may have changed. Same
	// contract; it must be cheap (an atomic load): it is read before every model call.
	Version() uint64
}

// WithCatalog returns a toolbox with tb's tools and the catalog c (nil: none). The tools of
// tb win over the catalog's of the same name.
func (tb *Toolbox) WithCatalog(c Catalog) *Toolbox {
	out := *tb
	out.catalog = c
	return &out
}

// resolve returns the entry of a catalog tool (its schema compiled, cached by name and
// schema), or an entry for an unavailable one.
func resolve(t Tool) (*entry, error) {
	params := t.Parameters
	if len(params) == 0 {
		params = anyObject
	}
	e := &entry{tool: t, spec: llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}}
	if t.Unavailable != "" {
		return e, nil
	}
	sch, err := compileSchema(t.Name, params)
	if err != nil {
		return nil, err
	}
	e.schema, e.fast = sch.lib, sch.fast
	return e, nil
}

// catalogView is what an ActiveSet's catalog tools were at one catalog version.
type catalogView struct {
	version uint64
	names   []string // static order, then Always, then the activated catalog names
	specs   []llm.ToolSpec
	byName  map[string]*entry
}

// view returns the set's tools with the catalog's as of now, rebuilt when its version moved.
func (a *ActiveSet) view() *catalogView {
	c := a.box.catalog
	v := c.Version()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cached != nil && a.cached.version == v {
		return a.cached
	}
	cv := &catalogView{version: v, names: slices.Clone(a.order), specs: slices.Clone(a.specs), byName: map[string]*entry{}}
	add := func(t Tool) {
		if a.entries[t.Name] != nil || cv.byName[t.Name] != nil {
			return
		}
		e, err := resolve(t)
		if err != nil {
			t.Unavailable = err.Error()
			e, _ = resolve(t)
		}
		cv.byName[t.Name] = e
		cv.names = append(cv.names, t.Name)
		if t.Unavailable == "" {
			cv.specs = append(cv.specs, e.spec)
		}
	}
	for _, t := range c.Always() {
		add(t)
	}
	for _, n := range a.dyn {
		if t, ok := c.Lookup(n); ok {
			add(t)
		}
	}
	a.cached = cv
	return cv
}

// catalogState is the part of an ActiveSet about catalog tools; a pointer, so that an
// ActiveSet can be copied by With without copying its lock.
type catalogState struct {
	// mu guards cached.
	mu     sync.Mutex
	cached *catalogView
}
