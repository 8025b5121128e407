package capsule_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/capsule"
	"github.com/murmur/mur/internal/capsule/capsuletest"
)

// launchOnce runs one Launch whose driver answers at once and returns the
// time from the Launch call to the driver's first request: the runtime's
// own launch cost (session directories, trace, prompt, MURMUR.md, the
// first request), without component instantiation.
func launchOnce(tb testing.TB, home, proj string, ceiling int64) time.Duration {
	var first time.Duration
	start := time.Now()
	drv := agent.DriverFunc(func(context.Context, []byte) (agent.Result, error) {
		if first == 0 {
			first = time.Since(start)
		}
		return agent.Result{Status: agent.StatusPassed, Data: `{"text":"ok","stop_reason":"end_turn"}`,
			Metadata: [][2]string{{agent.MetaInputTokens, "10"}, {agent.MetaOutputTokens, "1"}}}, nil
	})
	c, inst := capsuletest.Capsule(tb, capsuletest.Spec{})
	prompt := "You are careful."
	c.Inference.SystemPrompt = &prompt
	if ceiling > 0 {
		c.Inference.MaxSessionTokens = &ceiling
	}
	s, err := capsule.OpenParts(context.Background(), capsule.Parts{
		Capsule: c, Installed: inst,
		ManifestDir: proj, MurmurHome: home, LaunchTask: "Say ok.", Driver: drv,
		Tools: []agent.Tool{agent.NewSkill("style", "House style.", "# Style")},
	})
	if err != nil {
		tb.Fatalf("launch: %v", err)
	}
	out := s.RunLaunchTask(context.Background(), nil)
	if err := s.Close(out); err != nil || out.Status != agent.ExitOK {
		tb.Fatalf("launch: %+v %v", out, err)
	}
	return first
}

// BenchmarkLaunchToFirstRequest: warm process (tokenizer loaded).
func BenchmarkLaunchToFirstRequest(b *testing.B) {
	home, proj := b.TempDir(), b.TempDir()
	launchOnce(b, home, proj, 0)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		total += launchOnce(b, home, proj, 0)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/first-request")
}

// BenchmarkLaunchToFirstRequestCold re-executes the test binary so each
// launch is a fresh process with nothing loaded, as mur run is.
func BenchmarkLaunchToFirstRequestCold(b *testing.B) {
	b.Run("no-ceiling", func(b *testing.B) { coldLaunches(b, "") })
	// A spend ceiling measures the request before sending it, so the
	// first request waits for the tokenizer's vocabulary to load.
	b.Run("ceiling", func(b *testing.B) { coldLaunches(b, "1000000") })
}

func coldLaunches(b *testing.B, ceiling string) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLaunchColdChild$")
		cmd.Env = append(os.Environ(), "MUR_LAUNCH_COLD="+b.TempDir(), "MUR_LAUNCH_CEILING="+ceiling)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		_, after, _ := strings.Cut(string(out), "first_request_us=")
		us, _ := strconv.Atoi(strings.Fields(after)[0])
		total += time.Duration(us) * time.Microsecond
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/first-request")
}

// TestLaunchColdChild is the cold benchmark's child; it does nothing in a
// normal test run.
func TestLaunchColdChild(t *testing.T) {
	dir := os.Getenv("MUR_LAUNCH_COLD")
	if dir == "" {
		t.Skip("the cold-launch benchmark's child")
	}
	ceiling, _ := strconv.ParseInt(os.Getenv("MUR_LAUNCH_CEILING"), 10, 64)
	d := launchOnce(t, dir+"/home", dir+"/proj", ceiling)
	fmt.Printf("first_request_us=%d\n", d.Microseconds())
}
