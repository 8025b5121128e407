package timeline

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The HTML view is one page that stands alone — no script, no stylesheet
// or image fetched from anywhere — with one bar per turn and tool call on
// the session's clock, in order, failures marked, and a table row for each.
func TestWriteHTML(t *testing.T) {
	s := readString(t,
		`{"event":"session_start","ts":"2026-12-01T10:00:00Z","session_id":"ses_h","capsule":"acme/demo","model":"m-1"}`,
		`{"event":"retention","ts":"2026-12-01T10:00:00.01Z","reason":"max_sessions","session_id":"ses_old"}`,
		`{"event":"task_start","ts":"2026-12-01T10:00:00Z","task_id":"t1"}`,
		`{"event":"inference","ts":"2026-12-01T10:00:01Z","task_id":"t1","turn":1,"duration_ms":1000,"input_tokens":10,"output_tokens":2,"charged":12,"stop_reason":"tool_use"}`,
		`{"event":"tool_call","ts":"2026-12-01T10:00:02Z","task_id":"t1","turn":1,"tool":"read_file","call_id":"a","status":"passed","duration_ms":1000,"state_effect":"read"}`,
		`{"event":"tool_call","ts":"2026-12-01T10:00:03Z","task_id":"t1","turn":1,"tool":"write_file","call_id":"b","status":"failed","duration_ms":500,"error":"disk <full>"}`,
		`{"event":"inference","ts":"2026-12-01T10:00:04Z","task_id":"t1","turn":2,"duration_ms":1000,"stop_reason":"end_turn"}`,
		`{"event":"task_end","ts":"2026-12-01T10:00:04Z","task_id":"t1","exit_status":"ok"}`,
		`{"event":"session_end","ts":"2026-12-01T10:00:04Z","exit_status":"ok","duration_ms":4000,"turns":2}`,
	)
	var buf bytes.Buffer
	if err := s.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var rects []*html.Node
	var svgs, rows int
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "img", "iframe", "object":
				t.Errorf("the page has a <%s>", n.Data)
			case "svg":
				svgs++
			case "rect":
				rects = append(rects, n)
			case "tr":
				if c := attr(n, "class"); strings.HasPrefix(c, "turn") || strings.HasPrefix(c, "tool") {
					rows++
				}
			}
			for _, a := range n.Attr {
				if a.Key == "src" || (a.Key == "href" && !strings.HasPrefix(a.Val, "#")) || strings.Contains(a.Val, "url(") {
					t.Errorf("<%s %s=%q> reaches outside the page", n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if svgs != 1 || len(rects) != 4 || rows != 4 {
		t.Fatalf("%d svg, %d bars, %d table rows", svgs, len(rects), rows)
	}
	var classes []string
	var xs []float64
	for _, r := range rects {
		classes = append(classes, attr(r, "class"))
		x, _ := strconv.ParseFloat(attr(r, "x"), 64)
		w, _ := strconv.ParseFloat(attr(r, "width"), 64)
		if x < labelWidth || x+w > labelWidth+chartWidth+0.1 {
			t.Errorf("bar %s at %v+%v is off the chart", attr(r, "class"), x, w)
		}
		xs = append(xs, x)
	}
	if strings.Join(classes, ",") != "turn,turn,tool,tool failed" {
		t.Fatalf("bars %v", classes)
	}
	// On a 4 s clock: turn 1 at 0 s, turn 2 at 3 s, read_file at 1 s,
	// write_file at 2.5 s.
	for i, want := range []float64{0, 3, 1, 2.5} {
		if got := (xs[i] - labelWidth) / chartWidth * 4; got < want-0.01 || got > want+0.01 {
			t.Errorf("bar %d at %.2f s, want %.2f s", i, got, want)
		}
	}
	page := buf.String()
	for _, want := range []string{"Session ses_h", "acme/demo", "disk &lt;full&gt;", "max_sessions", "turn 1: write_file failed, 500ms: disk &lt;full&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
