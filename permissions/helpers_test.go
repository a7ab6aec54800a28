package permissions_test

// goleak over the package. The tests isolate the user's folders with internal/xdg/xdgtest
// and build specs and calls with permissions/permtest.

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
