// This file shortens a JSON value that an error message quotes (a setting of the wrong
// type, say): on one line and at most QuoteMax bytes.

package elide

import (
	"bytes"
	"encoding/json"
)

// QuoteMax is the most bytes Quote returns of valid JSON.
const QuoteMax = 80

// Quote returns raw on one line (compacted), cut to QuoteMax bytes ending in "..." when
// longer, for an error message that says what a user wrote. Invalid JSON comes back as it
// is. Pure.
func Quote(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	s := b.String()
	if len(s) > QuoteMax {
		s = s[:QuoteMax-3] + "..."
	}
	return s
}
