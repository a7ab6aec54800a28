// This file holds Info, a server's status as the faces list it (mcp/servers), and the
// listing of the servers of many sessions, each once.

package mcp

import "sort"

// Info is one MCP server as mcp/servers lists it.
type Info struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
}

// InfoOf returns st as mcp/servers lists it.
//
// Contract: pure.
func InfoOf(st ServerStatus) Info {
	return Info{Name: st.Name, Status: string(st.Status), Tools: st.Tools, Error: st.Error}
}

// Merge lists the servers of several catalogs (lists), each name and status once, sorted by
// name; never nil.
//
// Contract: pure.
func Merge(lists ...[]Info) []Info {
	seen := map[Info]bool{}
	out := []Info{}
	for _, l := range lists {
		for _, si := range l {
			if key := (Info{Name: si.Name, Status: si.Status}); !seen[key] {
				seen[key] = true
				out = append(out, si)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
