// This file holds Note: what the model is told, at the start of the next prompt, of the
// changes of its that the person undid, so that it does not make them again.

package changes

import (
	"fmt"
	"strings"
)

// What an undone change was.
const (
	// UndoneLines is lines From to To (1-based) of the file as the model left it.
	UndoneLines = "lines"
	// UndoneRemoved is lines the model removed after line From of the file as it left it
	// (0: at its start), put back.
	UndoneRemoved = "removed"
	// UndoneAdded is a file the model made, removed.
	UndoneAdded = "added"
	// UndoneDeleted is a file the model deleted, made again.
	UndoneDeleted = "deleted"
	// UndoneWhole is a binary file, put back whole.
	UndoneWhole = "whole"
	// UndoneMode is a change of the file's permission bits from From back to To.
	UndoneMode = "mode"
)

// Undone is one change of the model's that an undo took back.
type Undone struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	From int    `json:"from,omitempty"`
	To   int    `json:"to,omitempty"`
}

// NotePrefix starts the model's note.
const NotePrefix = "The person undid these changes of yours: "

// Note returns the text that tells the model which of its changes the person undid since
// its last prompt ("" when none), to put before the next prompt's text: "The person undid
// these changes of yours: PATH lines A-B, ...".
func Note(undone []Undone) string {
	if len(undone) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(NotePrefix)
	for i, u := range undone {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(u.Path)
		switch u.Kind {
		case UndoneLines:
			if u.From == u.To {
				fmt.Fprintf(&b, " line %d", u.From)
			} else {
				fmt.Fprintf(&b, " lines %d-%d", u.From, u.To)
			}
		case UndoneRemoved:
			if u.From == 0 {
				b.WriteString(" (the lines you removed at its start are back)")
			} else {
				fmt.Fprintf(&b, " (the lines you removed after line %d are back)", u.From)
			}
		case UndoneAdded:
			b.WriteString(" (a file you made: it is removed)")
		case UndoneDeleted:
			b.WriteString(" (a file you deleted: it is back)")
		case UndoneWhole:
			b.WriteString(" (the whole file is as it was before your change)")
		case UndoneMode:
			fmt.Fprintf(&b, " (its mode %04o is back to %04o)", u.From, u.To)
		}
	}
	b.WriteString(". Line numbers are those of the files as you left them. Do not make these changes again unless the person asks for them.")
	return b.String()
}

// hunkNote returns the undone change of the text hunk i: its changed lines, without context.
func (c *comparison) hunkNote(path string, i int) Undone {
	end := len(c.blocks)
	if i+1 < len(c.first) {
		end = c.first[i+1]
	}
	if len(c.blocks) == 0 {
		return lineNote(path, 0, 0) // a file added or deleted empty
	}
	bl := c.blocks[c.first[i]:end]
	return lineNote(path, bl[0].b0, bl[len(bl)-1].b1)
}

// lineNote returns the undone change of the lines [b0, b1) of the file as the model left it.
func lineNote(path string, b0, b1 int) Undone {
	if b1 == b0 {
		return Undone{Path: path, Kind: UndoneRemoved, From: b0}
	}
	return Undone{Path: path, Kind: UndoneLines, From: b0 + 1, To: b1}
}

// rangeNote returns the undone change of the lines [a0, a1) of the before file put back
// whatever stood in their place (lo and hi are bounds'): the changed lines there now, or,
// when there are only removed lines, the place they come back at.
func (c *comparison) rangeNote(path string, a0, a1 int, lo, hi []int) Undone {
	b0, b1 := lo[a0], hi[a1]
	first, last := -1, -1
	for j := b0; j < b1; j++ {
		if c.added[j] {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first >= 0 {
		return lineNote(path, first, last+1)
	}
	for i := a0; i < a1; i++ {
		if c.removed[i] {
			return lineNote(path, lo[i], lo[i])
		}
	}
	return lineNote(path, b0, b1)
}
