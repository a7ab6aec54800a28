// Package compact is pid's context compaction, as functions over transcripts: how big the
// context is (ContextTokens, Counter) and whether it must shrink (ShouldCompact), and may
// again after a compaction (CompactedAt, Counter.Regrown), where to cut it (CutPoint), how
// to ask the model for a summary of what is cut off (SummaryRequest, SummaryText; Summarize
// makes the call), and what the model sees in its place (SummaryMessage). It also tells a
// provider's "context too long" failure apart (IsContextOverflow), so that the caller can
// compact and retry (StreamRetrying).
//
// Nothing here reads files or keeps state but a Counter's; the model is called only through
// the provider a caller gives (Summarize, StreamRetrying). Package session keeps the
// compactions and stores the summary. Every function but a Counter's methods is safe for
// concurrent use, and none modifies the messages it is given.
//
// The design follows pi's coding-agent compaction (cut points, the chars/4 estimate, a
// structured summary that later compactions update).
//
// This file holds the settings and the threshold.
package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Settings are a model's compaction settings, "compaction" in a model's settings.
type Settings struct {
	// Enabled turns automatic compaction on.
	Enabled bool `json:"enabled"`
	// ReserveTokens is the room kept free for the model's answer: compaction starts when
	// the context grows past contextWindow - ReserveTokens.
	ReserveTokens int `json:"reserveTokens"`
	// KeepRecentTokens is about how much of the most recent conversation stays word for
	// word after a compaction.
	KeepRecentTokens int `json:"keepRecentTokens"`
}

// Defaults returns the settings a model has when it names none: enabled, 16384 tokens
// reserved, about 20000 tokens kept (pi's defaults).
func Defaults() Settings {
	return Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
}

// maxTokens bounds a token setting, far above any model's window, so that sums of settings
// and windows cannot overflow.
const maxTokens = 1 << 30

// ParseSettings reads a "compaction" settings object as written in JSON and fills the
// fields it leaves out (or sets to null) with Defaults. Empty or null raw means Defaults.
// Values that are given are kept as given, false and 0 included.
//
// On failure it returns Defaults and an error that names the field ("model.compaction.
// reserveTokens ...") and says what it accepts: an object, a boolean for enabled, whole
// numbers of tokens from 0 to 2^30 for the others, and no other keys (a misspelt key
// would otherwise be ignored silently).
func ParseSettings(raw json.RawMessage) (Settings, error) {
	s := Defaults()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if raw[0] != '{' {
		return s, fmt.Errorf(`model.compaction must be an object such as {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000}, not %s`, excerpt(raw))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return s, fmt.Errorf("model.compaction is not valid JSON (%v); fix the settings file", err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := bytes.TrimSpace(fields[k])
		if string(v) == "null" {
			continue
		}
		var err error
		switch k {
		case "enabled":
			switch string(v) {
			case "true", "false":
				s.Enabled = string(v) == "true"
			default:
				err = fmt.Errorf("model.compaction.enabled must be true or false, not %s", excerpt(v))
			}
		case "reserveTokens":
			s.ReserveTokens, err = tokenCount(k, v)
		case "keepRecentTokens":
			s.KeepRecentTokens, err = tokenCount(k, v)
		default:
			return Defaults(), fmt.Errorf("model.compaction has no setting %q; the settings are enabled, reserveTokens and keepRecentTokens", k)
		}
		if err != nil {
			return Defaults(), err
		}
	}
	return s, nil
}

// tokenCount reads a whole number of tokens between 0 and maxTokens.
func tokenCount(name string, v []byte) (int, error) {
	bad := fmt.Errorf("model.compaction.%s must be a whole number of tokens such as %d, not %s", name, fieldDefault(name), excerpt(v))
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return 0, bad
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, bad
	}
	if f < 0 {
		return 0, fmt.Errorf("model.compaction.%s must not be negative (it is %s)", name, v)
	}
	if f > maxTokens {
		return 0, fmt.Errorf("model.compaction.%s must be at most %d tokens (it is %s)", name, maxTokens, v)
	}
	return int(f), nil
}

func fieldDefault(name string) int {
	if name == "reserveTokens" {
		return Defaults().ReserveTokens
	}
	return Defaults().KeepRecentTokens
}

// excerpt quotes the start of a JSON value for an error message.
func excerpt(v []byte) string {
	s := string(v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Fit returns s adjusted to a model whose context window is window tokens: ReserveTokens
// and KeepRecentTokens each at most a quarter of the window. Defaults are meant for
// windows of 128K tokens and more; with a local model's 8K window they would compact
// before every call (16384 reserved is more than the window) and keep everything (20000
// recent tokens is the whole context). A window of 0 or less leaves s unchanged.
func (s Settings) Fit(window int) Settings {
	if window <= 0 {
		return s
	}
	s.ReserveTokens = min(s.ReserveTokens, window/4)
	s.KeepRecentTokens = min(s.KeepRecentTokens, window/4)
	return s
}

// ShouldCompact reports whether a context of tokens tokens must be compacted before the
// next model call: compaction is enabled and tokens exceeds window - s.ReserveTokens.
// It takes the settings as they are; see Fit for small windows.
func ShouldCompact(tokens, window int, s Settings) bool {
	return s.Enabled && tokens > window-s.ReserveTokens
}
