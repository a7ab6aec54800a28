package wire_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (an HTTP connection
// or timer that outlives its call).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
