//go:build !unix

package conversation

import "os"

// flock has no cross-process lock on this platform: two mur processes
// appending to one record at once can interleave ids.
func flock(*os.File) error { return nil }

func funlock(*os.File) {}

func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

func syncDir(string) {}
