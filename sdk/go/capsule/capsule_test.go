package capsule

import (
	"errors"
	"testing"
)

// TestRunPanicsWithTheError: the WIT run returns nothing, so an error
// from the script's function is a trap whose first stderr line carries
// its text.
func TestRunPanicsWithTheError(t *testing.T) {
	entry = func() error { return errors.New("no notes") }
	defer func() {
		entry = nil
		if r := recover(); r != "capsule run: no notes" {
			t.Fatalf("recovered %v", r)
		}
	}()
	run()
}
