//go:build cgo && !debug

package cm

func debugGC() {}
