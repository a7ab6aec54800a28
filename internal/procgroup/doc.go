// Package procgroup starts pid's child processes, each leading a process group of its own
// that dies with pid, and ends them all when pid winds down. StartGroup is the entry point;
// KillGroups ends every group still alive. Both the built-in tools (bash) and the MCP
// servers start their processes here, so neither depends on the other.
package procgroup
