//go:build !wasip1

package capsule

// Invoke calls the tool name of the capsule with data as its JSON input.
// Outside a component (GOOS=wasip1) there is no host to call.
func Invoke(name, data string) (Result, error) {
	return Result{}, &InvokeError{Msg: "not running as a component: build it with tools/guest/build.sh"}
}
