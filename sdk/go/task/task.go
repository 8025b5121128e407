// Package task lets a tool suspend the agent loop and ask for external
// input through murmur:task/task@0.1.0:
//
//	branch := task.RequestInput("Which branch should I target?")
//
// The call returns the text of the follow-up message/send. It is available
// only to tools while the capsule runs an A2A task; elsewhere, and when
// lifecycle.input_timeout_secs passes with no reply, the host traps the
// call and the task fails. RequestInput exists only in a wasip1 guest.
package task
