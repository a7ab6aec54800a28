// This file knows the output limits of Anthropic's models, for the default max_tokens: an
// answer capped below what the model can write cuts a long file write short.

package anthropic

import "strings"

// DefaultMaxTokens is the answer's token cap when Options.MaxTokens is 0 (the API requires
// one) and the model is none MaxTokensFor knows.
const DefaultMaxTokens = 16384

// thinkingAnswer is what max_tokens leaves for the answer above a thinking budget when the
// cap would not exceed the budget.
const thinkingAnswer = 8192

// outputLimits are the documented output limits (Anthropic's models overview, in tokens)
// by family and version, "family major.minor".
var outputLimits = map[string]int{
	"opus 4.0": 32000, "opus 4.1": 32000, "opus 4.5": 64000, "opus 4.6": 128000, "opus 4.7": 128000, "opus 4.8": 128000,
	"sonnet 4.0": 64000, "sonnet 4.5": 64000, "sonnet 4.6": 128000,
	"haiku 4.5":  64000,
	"sonnet 3.7": 64000,
	"sonnet 3.5": 8192, "haiku 3.5": 8192,
	"opus 3.0": 4096, "sonnet 3.0": 4096, "haiku 3.0": 4096,
}

// MaxTokensFor returns the default max_tokens for a model id: the model's documented output
// limit when MaxTokensFor knows it, else DefaultMaxTokens. It reads both of Anthropic's id
// forms, "claude-sonnet-4-5[-20250929]" and "claude-3-5-haiku-20241022", also behind a
// prefix ("anthropic.claude-opus-4-1-20250805-v1:0").
func MaxTokensFor(id string) int {
	if n, ok := outputLimits[modelVersion(id)]; ok {
		return n
	}
	return DefaultMaxTokens
}

// modelVersion returns "family major.minor" for a Claude model id ("sonnet 4.5"; a model
// without a minor version is .0), or "" when id is not one.
func modelVersion(id string) string {
	i := strings.Index(id, "claude-")
	if i < 0 {
		return ""
	}
	parts := strings.FieldsFunc(id[i+len("claude-"):], func(r rune) bool { return r == '-' || r == '.' || r == '@' || r == ':' })
	family := func(s string) bool { return s == "opus" || s == "sonnet" || s == "haiku" }
	digit := func(s string) bool { return len(s) == 1 && s[0] >= '0' && s[0] <= '9' }
	switch {
	case len(parts) >= 2 && family(parts[0]) && digit(parts[1]):
		// claude-sonnet-4-5-20250929, claude-opus-4-20250514 (no minor: a date follows).
		minor := "0"
		if len(parts) >= 3 && digit(parts[2]) {
			minor = parts[2]
		}
		return parts[0] + " " + parts[1] + "." + minor
	case len(parts) >= 2 && digit(parts[0]) && family(parts[1]):
		// claude-3-haiku-20240307.
		return parts[1] + " " + parts[0] + ".0"
	case len(parts) >= 3 && digit(parts[0]) && digit(parts[1]) && family(parts[2]):
		// claude-3-5-sonnet-20241022.
		return parts[2] + " " + parts[0] + "." + parts[1]
	}
	return ""
}
