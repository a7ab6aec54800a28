// This file opens pid's checkpoint store where it lives (OpenStore).

package rewind

import (
	"path/filepath"

	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/internal/xdg"
)

// OpenStore opens pid's checkpoint store, the folder checkpoints in pid's state folder
// (xdg.StateDir), bounded to maxBytes (0: the store's default). When the user settings turn
// checkpoints off (disabled) it opens nothing and returns nil and no error.
func OpenStore(disabled bool, maxBytes int64) (*checkpoint.Store, error) {
	if disabled {
		return nil, nil
	}
	dir, err := xdg.StateDir()
	if err != nil {
		return nil, err
	}
	return checkpoint.Open(filepath.Join(dir, "checkpoints"), maxBytes)
}
