package door

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// endedTask is an ended task whose JSON is in the spill file: what
// GetTask, ListTasks' filters and paging, and the store's bound need to
// find it, and no pointer, so the index costs the collector nothing to
// scan. The task id and context id are kept as hashes; the spill record
// holds them whole, and a hash match is checked against it. At
// DefaultKeepTasks the index was most of a long-lived door's heap growth
// as a map of whole entries (bench/RESULTS.md, door).
type endedTask struct {
	seq      int64
	version  taskstore.TaskVersion
	off      int64 // where the task's spill record starts
	stamp    int64 // the status timestamp in Unix nanoseconds, if hasStamp
	id       uint64
	context  uint64
	n        int32 // the spill record's length
	owner    uint16
	state    uint8 // index into endedStates
	hasStamp bool
}

// endedStates are the states an ended task can be in.
var endedStates = [...]a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

// endedIndex holds the spilled ended tasks, oldest first.
type endedIndex struct {
	seed  maphash.Seed
	tasks []endedTask // by seq
	byID  map[uint64]int64
	// clash holds, by id, the tasks whose id hash another kept task had
	// first: the index stays exact whatever the hashes.
	clash map[a2a.TaskID]int64
	// owners are the callers that own ended tasks; there are as many as
	// the door has credentials.
	owners  []string
	ownerOf map[string]uint16
	// sum replaces the seeded hash when set: tests make every id clash.
	sum func(string) uint64
}

func newEndedIndex() endedIndex {
	return endedIndex{seed: maphash.MakeSeed(), byID: map[uint64]int64{}, clash: map[a2a.TaskID]int64{}, ownerOf: map[string]uint16{}}
}

func (x *endedIndex) hash(s string) uint64 {
	if x.sum != nil {
		return x.sum(s)
	}
	return maphash.String(x.seed, s)
}

func (x *endedIndex) state(e *endedTask) a2a.TaskState { return endedStates[e.state] }

func (e *endedTask) timestamp() *time.Time {
	if !e.hasStamp {
		return nil
	}
	t := time.Unix(0, e.stamp)
	return &t
}

// fits reports whether st can be kept in the index: its state is an
// ended one, its owner has an index and its timestamp fits Unix
// nanoseconds.
func (x *endedIndex) fits(st *stored, n int) bool {
	_, known := x.ownerOf[st.owner]
	return slices.Contains(endedStates[:], st.state) && (known || len(x.owners) <= math.MaxUint16) &&
		n <= math.MaxInt32 && (st.stamp == nil || (st.stamp.Year() > 1678 && st.stamp.Year() < 2262))
}

// add files the ended task id, whose spill record of n bytes is at off.
// fits(st, n) holds.
func (x *endedIndex) add(id a2a.TaskID, st *stored, off int64, n int32) {
	owner, ok := x.ownerOf[st.owner]
	if !ok {
		owner = uint16(len(x.owners))
		x.owners = append(x.owners, st.owner)
		x.ownerOf[st.owner] = owner
	}
	e := endedTask{seq: st.seq, version: st.version, off: off, n: n, owner: owner,
		state: uint8(slices.Index(endedStates[:], st.state)), id: x.hash(string(id)), context: x.hash(st.context)}
	if st.stamp != nil {
		e.stamp, e.hasStamp = st.stamp.UnixNano(), true
	}
	at, _ := slices.BinarySearchFunc(x.tasks, e.seq, func(e endedTask, seq int64) int { return cmpInt(e.seq, seq) })
	x.tasks = slices.Insert(x.tasks, at, e)
	if _, taken := x.byID[e.id]; taken {
		x.clash[id] = e.seq
	} else {
		x.byID[e.id] = e.seq
	}
}

// at returns where the task seq is in tasks.
func (x *endedIndex) at(seq int64) (int, bool) {
	return slices.BinarySearchFunc(x.tasks, seq, func(e endedTask, seq int64) int { return cmpInt(e.seq, seq) })
}

// find returns where the task id is; idOf reads a record's whole id to
// check a hash match.
func (x *endedIndex) find(id a2a.TaskID, idOf func(*endedTask) (a2a.TaskID, error)) (int, bool) {
	if seq, ok := x.clash[id]; ok {
		return x.at(seq)
	}
	seq, ok := x.byID[x.hash(string(id))]
	if !ok {
		return 0, false
	}
	at, ok := x.at(seq)
	if !ok {
		return 0, false
	}
	if got, err := idOf(&x.tasks[at]); err != nil || got != id {
		return 0, false
	}
	return at, true
}

// remove drops tasks[at] from the index.
func (x *endedIndex) remove(at int) {
	e := x.tasks[at]
	if x.byID[e.id] == e.seq {
		delete(x.byID, e.id)
	} else {
		for id, seq := range x.clash {
			if seq == e.seq {
				delete(x.clash, id)
				break
			}
		}
	}
	x.tasks = slices.Delete(x.tasks, at, at+1)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// spillRecord is an ended task as the spill file holds it: its id and
// context id, each after its length as a uvarint, then its JSON.
func spillRecord(id a2a.TaskID, contextID string, body []byte) []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(id)+len(contextID)+len(body))
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	b = binary.AppendUvarint(b, uint64(len(contextID)))
	b = append(b, contextID...)
	return append(b, body...)
}

var errSpillRecord = errors.New("door: a kept task's record is damaged")

func parseSpillRecord(b []byte) (id a2a.TaskID, contextID string, body []byte, err error) {
	field := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", false
		}
		f := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return f, true
	}
	i, ok1 := field()
	c, ok2 := field()
	if !ok1 || !ok2 {
		return "", "", nil, errSpillRecord
	}
	return a2a.TaskID(i), c, b, nil
}
