//go:build !linux

package wasi

import "os"

// openResolved opens rel, already resolved by Resolve, through os.Root,
// which walks the path a component at a time and refuses to leave the root.
func (p *Preopen) openResolved(rel string, flags int, dir, follow bool) (*os.File, error) {
	return p.root.OpenFile(rel, flags, 0o666)
}
