package timeline

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestHTMLScreenshot renders the trace page in headless Chromium and reads
// the screenshot's pixels: the bars a person sees must be there, in their
// colours, in time order, with widths in proportion to their durations.
// It needs Debian's chromium (scripts/setup.d/80-chromium.sh); without it
// the test skips, and fails under MUR_REQUIRE_CHROMIUM=1 (make
// test-trace-html, in CI).
func TestHTMLScreenshot(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("MUR_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed: bash scripts/setup.d/80-chromium.sh")
		}
		t.Skip("chromium is not installed (scripts/setup.d/80-chromium.sh)")
	}
	s := readString(t,
		`{"event":"session_start","ts":"2026-12-01T10:00:00Z","session_id":"ses_h","capsule":"acme/demo","model":"m-1"}`,
		`{"event":"task_start","ts":"2026-12-01T10:00:00Z","task_id":"t1"}`,
		`{"event":"inference","ts":"2026-12-01T10:00:01Z","task_id":"t1","turn":1,"duration_ms":1000,"stop_reason":"tool_use"}`,
		`{"event":"tool_call","ts":"2026-12-01T10:00:02Z","task_id":"t1","turn":1,"tool":"read_file","call_id":"a","status":"passed","duration_ms":1000}`,
		`{"event":"tool_call","ts":"2026-12-01T10:00:03Z","task_id":"t1","turn":1,"tool":"write_file","call_id":"b","status":"failed","duration_ms":500,"error":"disk full"}`,
		`{"event":"inference","ts":"2026-12-01T10:00:04Z","task_id":"t1","turn":2,"duration_ms":1000,"stop_reason":"end_turn"}`,
		`{"event":"task_end","ts":"2026-12-01T10:00:04Z","task_id":"t1","exit_status":"ok"}`,
		`{"event":"session_end","ts":"2026-12-01T10:00:04Z","exit_status":"ok","duration_ms":4000,"turns":2}`,
	)
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "page.html"), filepath.Join(dir, "shot.png")
	var buf bytes.Buffer
	if err := s.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--window-size=1300,700", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	blue, green, red := runs(img, 0x3b, 0x6f, 0xd4), runs(img, 0x2e, 0x9e, 0x5b), runs(img, 0xd4, 0x3b, 0x3b)
	if len(blue) != 2 || len(green) != 1 || len(red) != 1 {
		t.Fatalf("bars seen: %d blue (turns), %d green (calls), %d red (failed calls); want 2, 1, 1", len(blue), len(green), len(red))
	}
	// Time order on the page: turn 1, the passed call, the failed call,
	// turn 2.
	order := [][2]int{blue[0], green[0], red[0], blue[1]}
	for i := 1; i < len(order); i++ {
		if order[i][0] < order[i-1][1]-2 {
			t.Errorf("bar %d starts at x=%d, before bar %d ends at x=%d", i, order[i][0], i-1, order[i-1][1])
		}
	}
	// Widths in proportion to durations: the 1 s call is twice the
	// 0.5 s failed one, and as wide as the 1 s turn.
	w := func(r [2]int) float64 { return float64(r[1] - r[0]) }
	if q := w(green[0]) / w(red[0]); q < 1.8 || q > 2.2 {
		t.Errorf("1 s call is %.2f× the 0.5 s call's width, want 2", q)
	}
	if q := w(green[0]) / w(blue[0]); q < 0.9 || q > 1.1 {
		t.Errorf("1 s call is %.2f× the 1 s turn's width, want 1", q)
	}
}

// runs are the distinct horizontal extents [x0, x1) of runs at least 20
// pixels long in the colour (r, g, b), merged across rows; the legend's
// 12-pixel swatches are shorter and left out.
func runs(img image.Image, r, g, b uint8) [][2]int {
	near := func(c, want uint32) bool {
		d := int(c>>8) - int(want)
		return d >= -6 && d <= 6
	}
	var out [][2]int
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		start := -1
		for x := bounds.Min.X; x <= bounds.Max.X; x++ {
			in := false
			if x < bounds.Max.X {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				in = near(cr, uint32(r)) && near(cg, uint32(g)) && near(cb, uint32(b))
			}
			switch {
			case in && start < 0:
				start = x
			case !in && start >= 0:
				if x-start >= 20 {
					out = merge(out, [2]int{start, x})
				}
				start = -1
			}
		}
	}
	return out
}

// merge adds run to the extents, joining one it overlaps; the result
// stays sorted by x.
func merge(ext [][2]int, run [2]int) [][2]int {
	for i, e := range ext {
		if run[0] < e[1] && e[0] < run[1] {
			ext[i] = [2]int{min(e[0], run[0]), max(e[1], run[1])}
			return ext
		}
	}
	ext = append(ext, run)
	for i := len(ext) - 1; i > 0 && ext[i][0] < ext[i-1][0]; i-- {
		ext[i], ext[i-1] = ext[i-1], ext[i]
	}
	return ext
}
