// This file compares two "mcpServers" objects: whether they name the same servers with the
// same configurations (a face that keeps a session's servers asks before it reopens them).

package mcp

import (
	"encoding/json"
	"maps"
	"slices"
)

// SameServers reports whether two "mcpServers" objects (ParseServers' shape) name the same
// servers with the same configurations (a server's identity, ServerConfig.Key: one process
// serves both), and lists the names of each, sorted. Objects that do not parse are not the
// same, and their names are nil.
//
// Contract: pure; safe for concurrent use.
func SameServers(a, b json.RawMessage) (same bool, namesA, namesB []string) {
	pa, errA := ParseServers(a)
	pb, errB := ParseServers(b)
	if errA != nil || errB != nil {
		return false, nil, nil
	}
	namesA, namesB = slices.Sorted(maps.Keys(pa)), slices.Sorted(maps.Keys(pb))
	if !slices.Equal(namesA, namesB) {
		return false, namesA, namesB
	}
	for n, c := range pa {
		if pb[n].Key() != c.Key() {
			return false, namesA, namesB
		}
	}
	return true, namesA, namesB
}
