package helper

import (
	"fmt"
	"strings"
	"testing"
)

func TestSeccompFilterAssembles(t *testing.T) {
	for _, unixOK := range []bool{false, true} {
		ins, err := SeccompFilter(unixOK)
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) < len(deniedSyscalls)+8 || len(ins) > 255 {
			t.Fatalf("filter length %d", len(ins))
		}
	}
}

func TestLandlockRights(t *testing.T) {
	if llRights(GrantRW, 7)&llExecute != 0 {
		t.Fatal("rw must not grant execute")
	}
	if llRights(GrantExecRead, 7)&llReadDir != 0 {
		t.Fatal("list_dir: false must not grant directory listing")
	}
	if llRights(GrantReadExec, 7)&llReadDir == 0 {
		t.Fatal("list_dir: true must grant directory listing")
	}
	if llHandled(1)&(llRefer|llTruncate) != 0 || llHandled(3)&llTruncate == 0 {
		t.Fatal("handled rights must follow the ABI")
	}
}

// A spec from another build is refused, not applied in part: another
// protocol version, or a field this helper does not know.
func TestDecodeRefusesOtherBuilds(t *testing.T) {
	var s InitSpec
	if err := decode(fmt.Sprintf(`{"v":%d,"path":"/bin/true","netns_fd":-1}`, Protocol), &s, &s.V); err != nil || s.Path != "/bin/true" {
		t.Fatalf("current spec: %v %+v", err, s)
	}
	for _, bad := range []string{
		fmt.Sprintf(`{"v":%d,"path":"/bin/true"}`, Protocol+1),
		`{"path":"/bin/true"}`,
		fmt.Sprintf(`{"v":%d,"path":"/bin/true","new_restriction":true}`, Protocol),
	} {
		var s InitSpec
		if err := decode(bad, &s, &s.V); err == nil {
			t.Errorf("decode(%s) accepted", bad)
		}
	}
	var w WatchSpec
	if err := decode(`{"v":0,"cgroups":["/x"]}`, &w, &w.V); err == nil || !strings.Contains(err.Error(), "different builds") {
		t.Errorf("watch spec of another build: %v", err)
	}
}
