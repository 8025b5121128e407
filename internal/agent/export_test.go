package agent

// TestLoop is testLoop for the package's external tests.
var TestLoop = testLoop
