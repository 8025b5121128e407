package timeline

import (
	"fmt"
	"html/template"
	"io"
	"time"
)

// WriteHTML writes the timeline as one HTML page that needs nothing else:
// styles inline, no script, no request for any other resource. An SVG
// draws each turn and tool call as a bar on the session's clock, one band
// per task; tables below list the same with their tokens, charge and
// errors.
func (s *Session) WriteHTML(w io.Writer) error {
	return page.Execute(w, s.view())
}

// Bar geometry of the SVG, in user units.
const (
	chartWidth = 1000.0
	labelWidth = 110.0
	rowHeight  = 18.0
	taskGap    = 14.0
)

type htmlView struct {
	S      *Session
	Status string
	Height float64
	Width  float64
	Bars   []bar
	Labels []label
	Ticks  []tick
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type label struct {
	X, Y float64
	Text string
}

type tick struct {
	X    float64
	Text string
}

func (s *Session) view() htmlView {
	v := htmlView{S: s, Status: s.ExitStatus, Width: labelWidth + chartWidth + 10}
	if v.Status == "" {
		v.Status = "no session_end (running, or ended without closing)"
	}
	start, end := s.Start, s.End
	for _, t := range s.Tasks {
		if start.IsZero() || t.Start.Before(start) {
			start = t.Start
		}
		for _, u := range t.Turns {
			if e := u.Start.Add(ms(u.DurationMS)); e.After(end) {
				end = e
			}
			for _, c := range u.Tools {
				if c.end.After(end) {
					end = c.end
				}
			}
		}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	x := func(t time.Time) float64 {
		return labelWidth + chartWidth*float64(t.Sub(start))/float64(span)
	}
	width := func(d time.Duration) float64 { return max(chartWidth*float64(d)/float64(span), 1.5) }
	for i := 0; i <= 4; i++ {
		d := span * time.Duration(i) / 4
		v.Ticks = append(v.Ticks, tick{X: labelWidth + chartWidth*float64(i)/4, Text: "+" + d.Round(time.Millisecond).String()})
	}
	y := 24.0
	for _, t := range s.Tasks {
		v.Labels = append(v.Labels, label{X: 4, Y: y + 12, Text: t.ID})
		for _, u := range t.Turns {
			class := "turn"
			if u.Error != "" {
				class = "turn failed"
			}
			v.Bars = append(v.Bars, bar{X: x(u.Start), Y: y, W: width(ms(u.DurationMS)), H: rowHeight - 4, Class: class,
				Title: fmt.Sprintf("turn %d: %s, %d in / %d out, charged %d%s", u.N, ms(u.DurationMS), u.InputTokens, u.OutputTokens, u.Charged, errSuffix(u.Error))})
		}
		y += rowHeight
		for _, u := range t.Turns {
			for _, c := range u.Tools {
				class := "tool"
				if c.Status != "passed" {
					class = "tool failed"
				}
				d := ms(c.DurationMS)
				at := c.end.Add(-d)
				if c.end.IsZero() {
					at = u.Start
				}
				v.Bars = append(v.Bars, bar{X: x(at), Y: y, W: width(d), H: rowHeight - 4, Class: class,
					Title: fmt.Sprintf("turn %d: %s %s, %s%s", u.N, c.Name, c.Status, d, errSuffix(c.Error))})
			}
		}
		y += rowHeight + taskGap
	}
	v.Height = y + 4
	return v
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

var page = template.Must(template.New("trace").Funcs(template.FuncMap{
	"ms": func(n int64) string { return ms(n).String() },
	"f":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"offset": func(s *Session, t time.Time) string {
		if s.Start.IsZero() {
			return t.Format(time.TimeOnly)
		}
		return fmt.Sprintf("+%.3fs", t.Sub(s.Start).Seconds())
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mur trace {{.S.ID}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d1d1f; }
h1 { font-size: 20px; margin: 0 0 4px; }
.summary { color: #555; margin-bottom: 16px; }
svg { border: 1px solid #ddd; background: #fafafa; }
svg text { font: 11px monospace; fill: #333; }
rect.turn { fill: #3b6fd4; }
rect.tool { fill: #2e9e5b; }
rect.failed { fill: #d43b3b; }
line.tick { stroke: #ccc; }
table { border-collapse: collapse; margin: 12px 0 24px; }
th, td { border-bottom: 1px solid #eee; padding: 3px 10px; text-align: left; font-size: 13px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { color: #b00; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
</style>
</head>
<body>
<h1>Session {{.S.ID}}</h1>
<div class="summary">{{.S.Capsule}} · model {{.S.Model}} · {{.Status}} · {{ms .S.DurationMS}} · {{.S.Turns}} turns · {{.S.InputTokens}} in / {{.S.OutputTokens}} out tokens · charged {{.S.Charged}} · {{len .S.Tasks}} tasks</div>
<div class="legend"><span style="background:#3b6fd4"></span>model turn<span style="background:#2e9e5b"></span>tool call<span style="background:#d43b3b"></span>failed</div>
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{{f .Width}}" height="{{f .Height}}" viewBox="0 0 {{f .Width}} {{f .Height}}">
{{- range .Ticks}}
<line class="tick" x1="{{f .X}}" y1="14" x2="{{f .X}}" y2="{{f $.Height}}"/><text x="{{f .X}}" y="11">{{.Text}}</text>
{{- end}}
{{- range .Labels}}
<text x="{{f .X}}" y="{{f .Y}}">{{.Text}}</text>
{{- end}}
{{- range .Bars}}
<rect class="{{.Class}}" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"><title>{{.Title}}</title></rect>
{{- end}}
</svg>
{{- if .S.Notes}}
<h2>Session records</h2>
<table>{{range .S.Notes}}<tr><td>{{offset $.S .Time}}</td><td>{{.Event}}</td><td>{{.Text}}</td></tr>{{end}}</table>
{{- end}}
{{- range .S.Tasks}}
<h2>Task {{.ID}}{{if .Origin}} ({{.Origin}}){{end}}: {{if .ExitStatus}}{{.ExitStatus}}{{else}}no task_end{{end}}, {{ms .DurationMS}}</h2>
{{- if .Reason}}<p>{{.Reason}}</p>{{end}}
<table class="task">
<tr><th>at</th><th>turn</th><th>step</th><th>status</th><th>duration</th><th>in</th><th>out</th><th>charged</th><th>error</th></tr>
{{- range .Turns}}
<tr class="turn{{if .Error}} failed{{end}}"><td>{{offset $.S .Start}}</td><td class="n">{{.N}}</td><td>model</td><td>{{.StopReason}}{{if gt .Attempts 1}} ({{.Attempts}} attempts){{end}}</td><td class="n">{{ms .DurationMS}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td><td class="n">{{.Charged}}</td><td>{{.Error}}</td></tr>
{{- $n := .N}}
{{- range .Tools}}
<tr class="tool{{if ne .Status "passed"}} failed{{end}}"><td></td><td class="n">{{$n}}</td><td>{{.Name}}{{if .ResourceID}} {{.ResourceID}}{{end}}</td><td>{{.Status}}</td><td class="n">{{ms .DurationMS}}</td><td></td><td></td><td></td><td>{{.Error}}</td></tr>
{{- end}}
{{- end}}
</table>
{{- range .Errors}}<p class="error">{{offset $.S .Time}} {{.Event}} {{.Text}}</p>{{end}}
{{- end}}
</body>
</html>
`))
