package shellcmd

// goleak over the package's tests: reading a command starts no goroutine, and none may be
// left behind by a test.

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
