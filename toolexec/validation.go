// This file writes the error text of a call whose arguments fail validation (R6): every
// failing field, and the arguments received, quoted only as far as a few KB (a model that
// sends 10 MB of arguments must not get 10 MB back in its next request).

package toolexec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Bounds of a validation error's text: the arguments quoted (indented when they are short
// enough for that to stay small), the failing fields listed, and one line of the list.
const (
	maxQuotedArgs  = 2 << 10
	maxIndented    = 4 << 10
	maxListed      = 20
	maxListedBytes = 300
)

var printer = message.NewPrinter(language.English)

// validationMessage names the failing fields (the first maxListed, each line cut at
// maxListedBytes) and quotes the arguments received, at most maxQuotedArgs of them (R6).
func validationMessage(tool string, err error, args json.RawMessage) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Validation failed for tool %q:\n", tool)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		all := leaves(ve, nil)
		for i, leaf := range all {
			if i == maxListed {
				fmt.Fprintf(&sb, "  - and %d more\n", len(all)-maxListed)
				break
			}
			loc := "/" + strings.Join(leaf.InstanceLocation, "/")
			if loc == "/" {
				loc = "(root)"
			}
			sb.WriteString(cut("  - "+loc+": "+leaf.ErrorKind.LocalizedString(printer), maxListedBytes))
			sb.WriteByte('\n')
		}
	} else {
		sb.WriteString(cut("  - "+err.Error(), maxQuotedArgs))
		sb.WriteByte('\n')
	}
	sb.WriteString("\nReceived arguments:\n")
	if len(args) > maxQuotedArgs {
		sb.WriteString(cut(string(args), maxQuotedArgs))
		fmt.Fprintf(&sb, "\n(%d bytes in all; only the first %d are quoted here)", len(args), maxQuotedArgs)
		return sb.String()
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, args, "", "  ") != nil || pretty.Len() > maxIndented {
		sb.Write(args) // not JSON, or nested so deep that its indentation would be most of it
	} else {
		sb.Write(pretty.Bytes())
	}
	return sb.String()
}

// cut returns s when it is at most n bytes, else its first n bytes (never half a UTF-8
// character) and "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}
