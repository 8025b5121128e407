package processdriver

import (
	"errors"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func str(s string) *string { return &s }

func TestLowerDescription(t *testing.T) {
	m := abitest.New(1 << 12)
	d := Description{Executable: "claude", VersionArgs: []string{"--version"}, TestedVersions: []string{"2.1.0", "2.2.0"},
		RequiredEnv: []string{"HOME"}, Interrupt: InterruptSignalInt, ReportsUsage: true}
	p := lowerDescription(m, d)
	list := func(at uint32) []string { return abi.StringList(m, abi.U32(m, at), abi.U32(m, at+4)) }
	got := Description{
		Executable:     abi.GetString(m, p),
		VersionArgs:    list(p + 8),
		TestedVersions: list(p + 16),
		RequiredEnv:    list(p + 24),
		Interrupt:      InterruptMode(m.Data[p+32]),
		ReportsUsage:   m.Data[p+33] == 1,
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("got %+v, want %+v", got, d)
	}
}

func TestLowerVersion(t *testing.T) {
	m := abitest.New(1 << 10)
	if got := abi.GetOptString(m, lowerVersion(m, "2.1.0", true)); got == nil || *got != "2.1.0" {
		t.Errorf("some = %v", got)
	}
	if got := abi.GetOptString(m, lowerVersion(m, "", false)); got != nil {
		t.Errorf("none = %v", *got)
	}
}

// putLaunchRequest writes a launch-request by its layout, as a host would.
func putLaunchRequest(m *abitest.Memory, r LaunchRequest) uint32 {
	p := m.Alloc(88, 4)
	abi.PutString(m, p, r.Prompt)
	abi.PutOptString(m, p+8, r.SystemPrompt)
	abi.PutOptString(m, p+20, r.Model)
	abi.PutOptString(m, p+32, r.Config)
	abi.PutOptString(m, p+44, r.ResumeSession)
	if r.Tools != nil {
		m.Data[p+56] = 1
		abi.PutString(m, p+60, r.Tools.URL)
		abi.PutString(m, p+68, r.Tools.Token)
		abi.PutStringList(m, p+76, r.Tools.ToolNames)
	}
	abi.PutU32(m, p+84, r.MaxTurns)
	return p
}

func TestLiftLaunchRequest(t *testing.T) {
	tests := []LaunchRequest{
		{Prompt: "fix the tests", MaxTurns: 10},
		{Prompt: "p", SystemPrompt: str("be brief"), Model: str("opus"), Config: str(`{"x":1}`), ResumeSession: str("sess-1"),
			Tools: &ToolServer{URL: "http://127.0.0.1:4000/mcp", Token: "tok", ToolNames: []string{"echo", "file"}}, MaxTurns: 3},
	}
	for _, want := range tests {
		m := abitest.New(1 << 12)
		if got := liftLaunchRequest(m, putLaunchRequest(m, want)); !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
}

func TestLowerLaunch(t *testing.T) {
	m := abitest.New(1 << 12)
	plan := LaunchPlan{Args: []string{"-p", "x"}, EnvSet: [][2]string{{"NO_COLOR", "1"}}, Stdin: []byte("hello\n"), CloseStdin: true, Interrupt: []byte{3}}
	p := lowerLaunch(m, plan, nil)
	if m.Data[p] != 0 {
		t.Fatal("ok plan lowered as err")
	}
	q := p + 4
	bytesAt := func(at uint32) []byte { return []byte(abi.String(m, abi.U32(m, at), abi.U32(m, at+4))) }
	got := LaunchPlan{
		Args:       abi.StringList(m, abi.U32(m, q), abi.U32(m, q+4)),
		EnvSet:     abi.Pairs(m, abi.U32(m, q+8), abi.U32(m, q+12)),
		Stdin:      bytesAt(q + 16),
		CloseStdin: m.Data[q+24] == 1,
		Interrupt:  bytesAt(q + 28),
	}
	if !reflect.DeepEqual(got, plan) {
		t.Errorf("got %+v, want %+v", got, plan)
	}
	p = lowerLaunch(m, LaunchPlan{}, errors.New("config refused"))
	if m.Data[p] != 1 || abi.GetString(m, p+4) != "config refused" {
		t.Error("error not lowered as err(string)")
	}
}

func TestLowerEvents(t *testing.T) {
	events := []Event{
		{Kind: EventSession, Text: "s-1"},
		{Kind: EventMessage, Text: "working"},
		{Kind: EventToolCall, ToolCall: ToolCall{ID: "c1", Name: "echo", Input: `{"text":"x"}`}},
		{Kind: EventUsage, Usage: Usage{InputTokens: 1 << 40, OutputTokens: 7}},
		{Kind: EventFinished, Text: "done"},
		{Kind: EventFailed, Text: "rate limited"},
		{Kind: EventSessionNotFound, Text: "s-0"},
	}
	m := abitest.New(1 << 12)
	p := lowerEvents(m, events, nil)
	base, n := abi.U32(m, p+4), abi.U32(m, p+8)
	if m.Data[p] != 0 || n != uint32(len(events)) || base%8 != 0 {
		t.Fatalf("disc %d, %d events at %d", m.Data[p], n, base)
	}
	for i, want := range events {
		e := base + uint32(i)*eventSize
		got := Event{Kind: EventKind(m.Data[e])}
		switch got.Kind {
		case EventToolCall:
			got.ToolCall = ToolCall{abi.GetString(m, e+8), abi.GetString(m, e+16), abi.GetString(m, e+24)}
		case EventUsage:
			got.Usage = Usage{abi.U64(m, e+8), abi.U64(m, e+16)}
		default:
			got.Text = abi.GetString(m, e+8)
		}
		if got != want {
			t.Errorf("event %d = %+v, want %+v", i, got, want)
		}
	}
	p = lowerEvents(m, nil, nil)
	if m.Data[p] != 0 || abi.U32(m, p+8) != 0 {
		t.Error("no events not lowered as an empty list")
	}
	p = lowerEvents(m, nil, errors.New("bad line"))
	if m.Data[p] != 1 || abi.GetString(m, p+4) != "bad line" {
		t.Error("error not lowered as err(string)")
	}
}
