package tool

// InvokeError is the err of murmur:tool-registry/invoke: the call could
// not be made at all (no task in progress, a tool already on the call
// chain, input that is not JSON). A tool that ran and failed is a Result.
type InvokeError struct{ Msg string }

func (e *InvokeError) Error() string { return "tool-registry/invoke: " + e.Msg }
