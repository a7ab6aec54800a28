// This file holds View: how a tool describes a call of it to a person (what kind of work it
// is, a title, the files it touches and, once it ended, the files it changed), so that a face
// renders every tool, the built-in ones and MCP's alike, one way.

package toolexec

import "encoding/json"

// Kind is what a call does, for the icon a face shows: the kinds of the Agent Client
// Protocol's tool calls, a vocabulary general enough for any face.
type Kind string

// The kinds.
const (
	KindRead       Kind = "read"
	KindEdit       Kind = "edit"
	KindDelete     Kind = "delete"
	KindMove       Kind = "move"
	KindSearch     Kind = "search"
	KindExecute    Kind = "execute"
	KindThink      Kind = "think"
	KindFetch      Kind = "fetch"
	KindSwitchMode Kind = "switch_mode"
	KindOther      Kind = "other"
)

// View is how a call is shown to a person.
type View struct {
	Kind Kind
	// Title is one line a person reads about the call: "Read src/main.go", "Run `make`".
	Title string
	// Locations are the files the call touches (absolute paths), at a line when it points
	// at one.
	Locations []Location
	// Changes are, in the view of a call that ended without error, the files it changed.
	Changes []FileChange
	// Terminal is the editor's terminal the call runs in (an ACP client's terminal id), as
	// its progress or result details say; "" when it runs in none.
	Terminal string
}

// Location is a file a call touches: an absolute path, and a 1-based line (0: none).
type Location struct {
	Path string
	Line int
}

// FileChange is what a call changed in one file.
type FileChange struct {
	// Path is the file, absolute.
	Path string
	// Diff is the change as a unified diff ("---"/"+++" headers, "@@" hunks with three lines
	// of context, "\ No newline at end of file" markers); "" when nothing changed.
	Diff string
	// Created is set when the call made the file; Content is then its whole text when the
	// call gave it ("" when not known: the diff, which may be cut short, holds it).
	Created bool
	Content string
	// Line is the 1-based line where the first change is (0: not known).
	Line int
}

// ViewOf returns how a call of t with args is shown (Tool.View), with details the result's
// of a call that ended without error (nil at the call's start); a tool without a View is
// shown by its name, of kind other.
func (t Tool) ViewOf(args json.RawMessage, details any) View {
	if t.View == nil {
		return View{Kind: KindOther, Title: t.Name}
	}
	return t.View(args, details)
}
