package hook

import "github.com/murmur/mur/sdk/go/internal/abi"

// ReadError is the read-error of murmur:task-io/read and
// murmur:conversation/read. Case is "not-granted" (the hook's capsule
// entry does not grant the read; Msg names the key), "no-task" (no task
// is in progress) or "no-context" (no context was named and no task is in
// progress).
type ReadError struct {
	Case string
	Msg  string
}

func (e *ReadError) Error() string { return e.Case + ": " + e.Msg }

// TaskText is murmur:task-io/read's task-text: the task in progress and,
// from on-task-end on, the agent's result.
type TaskText struct {
	TaskID      string  `json:"task_id"`
	ContextID   string  `json:"context_id"`
	Input       string  `json:"input"`
	AgentResult *string `json:"agent_result"`
}

// Entry is one message of a conversation record.
type Entry struct {
	// Index is the message's position in its context's record, from 0,
	// stable across sessions.
	Index   uint64  `json:"index"`
	TaskID  *string `json:"task_id"`
	Role    string  `json:"role"`
	Content string  `json:"content"`
}

// Page is one read of a conversation record.
type Page struct {
	Entries []Entry `json:"entries"`
	// Next is the start of the following page; nil at the record's end.
	Next *uint64 `json:"next"`
}

var readCases = []string{"not-granted", "no-task"}

var convCases = []string{"not-granted", "no-context"}

// liftReadError lifts a read-error variant stored at addr (a u8 case, the
// string at +4).
func liftReadError(m abi.Memory, addr uint32, cases []string) *ReadError {
	c := int(abi.U8(m, addr))
	e := &ReadError{Msg: abi.GetString(m, addr+4)}
	if c < len(cases) {
		e.Case = cases[c]
	}
	return e
}

// liftTaskResult lifts the result<task-text, read-error> current stores
// at addr: the case at 0, the payload at 4 (both arms align to 4).
func liftTaskResult(m abi.Memory, addr uint32) (TaskText, error) {
	if abi.U8(m, addr) != 0 {
		return TaskText{}, liftReadError(m, addr+4, readCases)
	}
	p := addr + 4
	return TaskText{
		TaskID:      abi.GetString(m, p),
		ContextID:   abi.GetString(m, p+8),
		Input:       abi.GetString(m, p+16),
		AgentResult: abi.GetOptString(m, p+24),
	}, nil
}

// entrySize is record entry's size: index u64, task-id option<string> at
// 8, role at 20, content at 28, padded to its 8-byte alignment.
const entrySize = 40

// liftPageResult lifts the result<page, read-error> read-page stores at
// addr: the case at 0 and the payload at 8 (page aligns to 8 for its
// u64s). A page is entries (ptr, len) at 8, next option<u64> at 16 (its
// case at 16, the value at 24).
func liftPageResult(m abi.Memory, addr uint32) (Page, error) {
	if abi.U8(m, addr) != 0 {
		return Page{}, liftReadError(m, addr+8, convCases)
	}
	ptr, n := abi.U32(m, addr+8), abi.U32(m, addr+12)
	pg := Page{Entries: make([]Entry, n)}
	for i := range pg.Entries {
		e := ptr + uint32(i)*entrySize
		pg.Entries[i] = Entry{
			Index:   abi.U64(m, e),
			TaskID:  abi.GetOptString(m, e+8),
			Role:    abi.GetString(m, e+20),
			Content: abi.GetString(m, e+28),
		}
	}
	if abi.U8(m, addr+16) != 0 {
		next := abi.U64(m, addr+24)
		pg.Next = &next
	}
	return pg, nil
}
