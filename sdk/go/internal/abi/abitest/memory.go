// Package abitest gives host tests of the guest SDK a linear memory backed
// by a byte slice.
package abitest

// Memory is a fake linear memory: a byte slice with a bump allocator. Address
// 0 is never handed out, as in a real guest.
type Memory struct {
	Data []byte
	next uint32
}

// New returns a memory of size bytes.
func New(size uint32) *Memory { return &Memory{Data: make([]byte, size), next: 8} }

// Bytes returns the n bytes at ptr; it panics outside the memory, as a
// guest would trap.
func (m *Memory) Bytes(ptr, n uint32) []byte { return m.Data[ptr : ptr+n : ptr+n] }

// Alloc bump-allocates size zeroed bytes aligned to align.
func (m *Memory) Alloc(size, align uint32) uint32 {
	p := (m.next + align - 1) &^ (align - 1)
	m.next = p + size
	clear(m.Data[p:m.next])
	return p
}

// Put copies b into fresh memory and returns its address.
func (m *Memory) Put(b []byte) uint32 {
	p := m.Alloc(uint32(len(b)), 1)
	copy(m.Data[p:], b)
	return p
}

// Reset rewinds the allocator to next, as a guest resets its arena.
func (m *Memory) Reset(next uint32) { m.next = next }
