//go:build !wasip1

package capsule

// Invoke calls the tool name of the capsule with data as its JSON input.
// Outside a component (GOOS=wasip1) there is no host to call.
func Invoke(name, data string) (Result, error) {
	return Result{}, &InvokeError{Msg: "not running as a component: build it with tools/guest/build.sh"}
}

// errNoHost is every manage call's error outside a component.
var errNoHost = &ManageError{Msg: "not running as a component: build it with tools/guest/build.sh"}

// List is manage.list; outside a component there is nothing installed.
func List() []Artifact { return nil }

// Describe is manage.describe; outside a component there is no host.
func Describe(string) (ArtifactInfo, error) { return ArtifactInfo{}, errNoHost }

// Search is manage.search; outside a component there is no host.
func Search(string) ([]Artifact, error) { return nil, errNoHost }

// Pull is manage.pull; outside a component there is no host.
func Pull(string, string) (Artifact, error) { return Artifact{}, errNoHost }

// Remove is manage.remove; outside a component there is no host.
func Remove(string) (bool, error) { return false, errNoHost }

// Diagnostics is manage.diagnostics; outside a component there is no host.
func Diagnostics() (RuntimeState, error) { return RuntimeState{}, errNoHost }
