package session_test

// Every test of the package ends with no goroutine left (goleak).

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
