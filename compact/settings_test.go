// This file tests the settings, Fit and ShouldCompact.

package compact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pid-agent/pid/compact"
)

func TestDefaults(t *testing.T) {
	if got, want := compact.Defaults(), (compact.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}); got != want {
		t.Errorf("Defaults() = %+v, want %+v", got, want)
	}
}

// Missing and null fields take the defaults; given ones, false and 0 included, are kept;
// wrong ones fail with an error naming the field and leave the defaults.
func TestParseSettings(t *testing.T) {
	d := compact.Defaults()
	tests := []struct {
		raw     string
		want    compact.Settings
		wantErr string // substring; "" means success
	}{
		{raw: "", want: d},
		{raw: "null", want: d},
		{raw: "  {}  ", want: d},
		{raw: `{"enabled": false}`, want: compact.Settings{Enabled: false, ReserveTokens: 16384, KeepRecentTokens: 20000}},
		{raw: `{"enabled": true, "reserveTokens": 4096}`, want: compact.Settings{Enabled: true, ReserveTokens: 4096, KeepRecentTokens: 20000}},
		{raw: `{"keepRecentTokens": 0, "reserveTokens": null}`, want: compact.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 0}},
		{raw: `{"enabled": null, "reserveTokens": 1000, "keepRecentTokens": 2000}`, want: compact.Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 2000}},
		{raw: `{"reserveTokens": 2e4}`, want: compact.Settings{Enabled: true, ReserveTokens: 20000, KeepRecentTokens: 20000}},
		{raw: `{"reserveTokens": 1073741824}`, want: compact.Settings{Enabled: true, ReserveTokens: 1 << 30, KeepRecentTokens: 20000}},

		{raw: `true`, wantErr: "model.compaction must be an object"},
		{raw: `[1]`, wantErr: "model.compaction must be an object"},
		{raw: `{"enabled": tru`, wantErr: "model.compaction is not valid JSON"},
		{raw: `{} {}`, wantErr: "model.compaction is not valid JSON"},
		{raw: `{"enabled": "yes"}`, wantErr: `model.compaction.enabled must be true or false, not "yes"`},
		{raw: `{"enabled": 1}`, wantErr: "model.compaction.enabled must be true or false, not 1"},
		{raw: `{"reserveTokens": "16384"}`, wantErr: `model.compaction.reserveTokens must be a whole number of tokens such as 16384, not "16384"`},
		{raw: `{"keepRecentTokens": 1.5}`, wantErr: "model.compaction.keepRecentTokens must be a whole number of tokens such as 20000, not 1.5"},
		{raw: `{"keepRecentTokens": true}`, wantErr: "model.compaction.keepRecentTokens must be a whole number"},
		{raw: `{"reserveTokens": -1}`, wantErr: "model.compaction.reserveTokens must not be negative (it is -1)"},
		{raw: `{"reserveTokens": 1073741825}`, wantErr: "model.compaction.reserveTokens must be at most 1073741824 tokens"},
		{raw: `{"reserveToken": 5}`, wantErr: `model.compaction has no setting "reserveToken"; the settings are enabled, reserveTokens and keepRecentTokens`},
	}
	for _, tt := range tests {
		got, err := compact.ParseSettings(json.RawMessage(tt.raw))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSettings(%s): error %v, want one containing %q", tt.raw, err, tt.wantErr)
			}
			if got != d {
				t.Errorf("ParseSettings(%s) failed but returned %+v, not the defaults", tt.raw, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSettings(%s) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

// Fit caps reserve and keep at a quarter of the window, and leaves big windows alone.
func TestFit(t *testing.T) {
	d := compact.Defaults()
	tests := []struct {
		window int
		want   compact.Settings
	}{
		{200000, d},
		{128000, d},
		{32768, compact.Settings{Enabled: true, ReserveTokens: 8192, KeepRecentTokens: 8192}},
		{8192, compact.Settings{Enabled: true, ReserveTokens: 2048, KeepRecentTokens: 2048}},
		{0, d},
		{-5, d},
	}
	for _, tt := range tests {
		if got := d.Fit(tt.window); got != tt.want {
			t.Errorf("Defaults().Fit(%d) = %+v, want %+v", tt.window, got, tt.want)
		}
	}
	off := compact.Settings{Enabled: false, ReserveTokens: 10, KeepRecentTokens: 10}
	if got := off.Fit(8192); got != off {
		t.Errorf("Fit changed small or disabled settings: %+v", got)
	}
}

// The threshold is strict (tokens must exceed window - reserve), and disabled compaction
// never triggers.
func TestShouldCompact(t *testing.T) {
	on := compact.Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}
	off := on
	off.Enabled = false
	tests := []struct {
		tokens, window int
		s              compact.Settings
		want           bool
	}{
		{200000 - 16384, 200000, on, false},
		{200000 - 16384 + 1, 200000, on, true},
		{0, 200000, on, false},
		{500000, 200000, off, false},
		{1, 8192, on, true}, // a reserve past the window: always (see Fit)
		{1, 8192, on.Fit(8192), false},
		{6145, 8192, on.Fit(8192), true},
	}
	for _, tt := range tests {
		if got := compact.ShouldCompact(tt.tokens, tt.window, tt.s); got != tt.want {
			t.Errorf("ShouldCompact(%d, %d, %+v) = %v, want %v", tt.tokens, tt.window, tt.s, got, tt.want)
		}
	}
}
