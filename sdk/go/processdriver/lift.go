package processdriver

import (
	"github.com/murmur/mur/sdk/go/internal/abi"
)

// Memory layouts (canonical ABI, all align 4 except harness-event):
//
//	description     executable @0, version-args @8, tested-versions @16,
//	                required-env @24, interrupt u8 @32, reports-usage @33; 36
//	launch-request  prompt @0, system-prompt @8, model @20, config @32,
//	                resume-session @44, tools option @56 (url @60,
//	                token @68, tool-names @76), max-turns @84; 88
//	launch-plan     args @0, env-set @8, stdin @16, close-stdin @24,
//	                interrupt @28; 36 (in result<_, string> at @4)
//	harness-event   align 8: disc @0, payload @8; 32

const (
	descriptionSize = 36
	resultSize      = 40
	optStringSize   = 12
	eventSize       = 32
)

func lowerDescription(m abi.Memory, d Description) uint32 {
	p := m.Alloc(descriptionSize, 4)
	abi.PutString(m, p, d.Executable)
	abi.PutStringList(m, p+8, d.VersionArgs)
	abi.PutStringList(m, p+16, d.TestedVersions)
	abi.PutStringList(m, p+24, d.RequiredEnv)
	abi.PutU8(m, p+32, uint8(d.Interrupt))
	if d.ReportsUsage {
		abi.PutU8(m, p+33, 1)
	}
	return p
}

func lowerVersion(m abi.Memory, v string, ok bool) uint32 {
	p := m.Alloc(optStringSize, 4)
	if ok {
		abi.PutOptString(m, p, &v)
	}
	return p
}

func liftLaunchRequest(m abi.Memory, p uint32) LaunchRequest {
	r := LaunchRequest{
		Prompt:        abi.GetString(m, p),
		SystemPrompt:  abi.GetOptString(m, p+8),
		Model:         abi.GetOptString(m, p+20),
		Config:        abi.GetOptString(m, p+32),
		ResumeSession: abi.GetOptString(m, p+44),
		MaxTurns:      abi.U32(m, p+84),
	}
	if abi.U8(m, p+56) != 0 {
		r.Tools = &ToolServer{
			URL:       abi.GetString(m, p+60),
			Token:     abi.GetString(m, p+68),
			ToolNames: abi.StringList(m, abi.U32(m, p+76), abi.U32(m, p+80)),
		}
	}
	return r
}

func putBytes(m abi.Memory, addr uint32, b []byte) {
	p, n := abi.LowerString(m, string(b))
	abi.PutU32(m, addr, p)
	abi.PutU32(m, addr+4, n)
}

func lowerLaunch(m abi.Memory, plan LaunchPlan, err error) uint32 {
	p := m.Alloc(resultSize, 4)
	if err != nil {
		abi.PutU8(m, p, 1)
		abi.PutString(m, p+4, err.Error())
		return p
	}
	q := p + 4
	abi.PutStringList(m, q, plan.Args)
	abi.PutPairs(m, q+8, plan.EnvSet)
	putBytes(m, q+16, plan.Stdin)
	if plan.CloseStdin {
		abi.PutU8(m, q+24, 1)
	}
	putBytes(m, q+28, plan.Interrupt)
	return p
}

func lowerEvents(m abi.Memory, events []Event, err error) uint32 {
	p := m.Alloc(12, 4)
	if err != nil {
		abi.PutU8(m, p, 1)
		abi.PutString(m, p+4, err.Error())
		return p
	}
	if len(events) == 0 {
		abi.PutU32(m, p+4, 8)
		return p
	}
	base := m.Alloc(uint32(len(events))*eventSize, 8)
	for i, ev := range events {
		e := base + uint32(i)*eventSize
		abi.PutU8(m, e, uint8(ev.Kind))
		switch ev.Kind {
		case EventToolCall:
			abi.PutString(m, e+8, ev.ToolCall.ID)
			abi.PutString(m, e+16, ev.ToolCall.Name)
			abi.PutString(m, e+24, ev.ToolCall.Input)
		case EventUsage:
			abi.PutU64(m, e+8, ev.Usage.InputTokens)
			abi.PutU64(m, e+16, ev.Usage.OutputTokens)
		default:
			abi.PutString(m, e+8, ev.Text)
		}
	}
	abi.PutU32(m, p+4, base)
	abi.PutU32(m, p+8, uint32(len(events)))
	return p
}
