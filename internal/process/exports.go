package process

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/murmur/mur/internal/component"
)

// componentPreamble is a component binary's magic and layer-1 version.
var componentPreamble = []byte{0x00, 'a', 's', 'm', 0x0d, 0x00, 0x01, 0x00}

// exportSection is the component-level export section's id.
const exportSection = 11

// maxExportSection bounds what is read of one export section: a driver's
// lists a handful of names.
const maxExportSection = 1 << 20

// ExportsProcessInterface reports whether the component binary r exports
// any version of murmur:driver/process, from its top-level export
// sections alone: nothing is compiled, and every other section is
// skipped unread. A transport: http driver that does is E-RUN-030, which
// this decides before the driver's compilation, so before any session.
// An error means r is no component binary this could read.
func ExportsProcessInterface(r io.ReadSeeker) (bool, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || !bytes.Equal(pre[:], componentPreamble) {
		return false, errors.New("not a WebAssembly component binary")
	}
	br := bufio.NewReaderSize(r, 64)
	var pos int64 = 8
	for {
		id, err := br.ReadByte()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		size, n, err := uleb(br)
		if err != nil {
			return false, fmt.Errorf("section at byte %d: %w", pos, err)
		}
		pos += 1 + int64(n)
		if id == exportSection {
			if size > maxExportSection {
				return false, fmt.Errorf("export section at byte %d is %d bytes", pos, size)
			}
			body := make([]byte, size)
			if _, err := io.ReadFull(br, body); err != nil {
				return false, fmt.Errorf("export section at byte %d: %w", pos, err)
			}
			names, err := exportNames(body)
			if err != nil {
				return false, fmt.Errorf("export section at byte %d: %w", pos, err)
			}
			for _, name := range names {
				if isProcessInterface(name) {
					return true, nil
				}
			}
		} else {
			// Skip the payload: what the reader buffered, then seek.
			skip := int64(size)
			if b := int64(br.Buffered()); b > 0 {
				k := min(b, skip)
				br.Discard(int(k))
				skip -= k
			}
			if skip > 0 {
				if _, err := r.Seek(skip, io.SeekCurrent); err != nil {
					return false, err
				}
				br.Reset(r)
			}
		}
		pos += int64(size)
	}
}

func isProcessInterface(name string) bool {
	bare := component.IfaceProcess[:strings.LastIndex(component.IfaceProcess, "@")]
	return name == bare || strings.HasPrefix(name, bare+"@")
}

// exportNames reads the names of a component export section:
// vec(export), export := exportname' sortidx externdesc?.
func exportNames(b []byte) ([]string, error) {
	r := bytes.NewReader(b)
	count, _, err := uleb(r)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := uint64(0); i < count; i++ {
		// exportname': 0x00 name, or 0x01 name (a versioned name).
		k, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if k != 0x00 && k != 0x01 {
			return nil, fmt.Errorf("export %d: name kind 0x%02x", i, k)
		}
		name, err := str(r)
		if err != nil {
			return nil, fmt.Errorf("export %d: %w", i, err)
		}
		names = append(names, name)
		// sortidx: sort (0x00 core-sort, or one byte) then an index.
		s, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if s == 0x00 {
			if _, err := r.ReadByte(); err != nil {
				return nil, err
			}
		}
		if _, _, err := uleb(r); err != nil {
			return nil, err
		}
		// externdesc?: 0x00 none, 0x01 then the descriptor.
		opt, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if opt == 0x01 {
			if err := skipExternDesc(r); err != nil {
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
		} else if opt != 0x00 {
			return nil, fmt.Errorf("export %d: descriptor flag 0x%02x", i, opt)
		}
	}
	if r.Len() != 0 {
		return nil, errors.New("bytes after the last export")
	}
	return names, nil
}

// skipExternDesc reads past one externdesc.
func skipExternDesc(r *bytes.Reader) error {
	d, err := r.ReadByte()
	if err != nil {
		return err
	}
	switch d {
	case 0x00: // core module: 0x11 typeidx
		if b, err := r.ReadByte(); err != nil || b != 0x11 {
			return errors.New("core module descriptor")
		}
	case 0x02, 0x03: // value or type bound: a flag byte then an index
		if _, err := r.ReadByte(); err != nil {
			return err
		}
	case 0x01, 0x04, 0x05: // func, component, instance: a type index
	default:
		return fmt.Errorf("descriptor 0x%02x", d)
	}
	_, _, err = uleb(r)
	return err
}

func str(r *bytes.Reader) (string, error) {
	n, _, err := uleb(r)
	if err != nil {
		return "", err
	}
	if n > uint64(r.Len()) {
		return "", io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	r.Read(b)
	return string(b), nil
}

// uleb reads an unsigned LEB128 of at most 32 bits (what section sizes,
// counts and indexes are), and how many bytes it took.
func uleb(r io.ByteReader) (uint64, int, error) {
	v, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, err
	}
	if v > 1<<32-1 {
		return 0, 0, errors.New("a LEB128 past 32 bits")
	}
	return v, binary.PutUvarint(make([]byte, binary.MaxVarintLen64), v), nil
}
