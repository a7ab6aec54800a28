// Package xdg names the folders pid keeps the user's files in, after the XDG base directory
// specification. The entry points are StateDir and ConfigDir.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// StateDir returns $XDG_STATE_HOME/pid, or ~/.local/state/pid when XDG_STATE_HOME is unset or
// not absolute. It reads the environment only; it fails when neither is known.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pid"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state folder (set XDG_STATE_HOME or HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "pid"), nil
}

// ConfigDir returns $XDG_CONFIG_HOME/pid, or ~/.config/pid when XDG_CONFIG_HOME is unset or
// not absolute. It reads the environment only; it fails when neither is known.
func ConfigDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pid"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no config folder (set XDG_CONFIG_HOME or HOME): %w", err)
	}
	return filepath.Join(home, ".config", "pid"), nil
}
