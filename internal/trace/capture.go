package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Capture is trace.capture: how much of each turn's driver request the
// trace keeps.
type Capture string

const (
	// CaptureNone writes no content hashes and no blobs.
	CaptureNone Capture = "none"
	// CaptureMeta writes the hashes (the default).
	CaptureMeta Capture = "meta"
	// CaptureContent writes the hashes, each body under blobs/, and
	// tool_call.output.
	CaptureContent Capture = "content"
)

// ErrCapture means a capture level outside none, meta and content.
var ErrCapture = errors.New("unknown trace.capture level")

// ParseCapture maps the manifest value to a Capture; "" is the default meta.
func ParseCapture(s string) (Capture, error) {
	switch Capture(s) {
	case "":
		return CaptureMeta, nil
	case CaptureNone, CaptureMeta, CaptureContent:
		return Capture(s), nil
	}
	return "", fmt.Errorf("%w: %q", ErrCapture, s)
}

// Recorder applies a capture level: it hashes bodies and, under content,
// stores each one once as blobs/<sha256>.
type Recorder struct {
	Level Capture
	// BlobDir is the records directory's blobs/.
	BlobDir string
}

// Hashes reports whether the level writes content hashes.
func (r Recorder) Hashes() bool { return r.Level == CaptureMeta || r.Level == CaptureContent }

// Content reports whether the level writes bodies (blobs and tool output).
func (r Recorder) Content() bool { return r.Level == CaptureContent }

// Hash returns the hex SHA-256 of body and, under content, writes the blob.
// It returns "" when the level keeps no hashes.
func (r Recorder) Hash(body []byte) (string, error) {
	if !r.Hashes() {
		return "", nil
	}
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	if r.Content() {
		if err := writeBlob(filepath.Join(r.BlobDir, h), body); err != nil {
			noteBlobErr(r.BlobDir, err)
			return h, err
		}
	}
	return h, nil
}

// blobErrs keeps the first blob write failure of each blob directory.
// Callers that cannot stop for a missing blob (a tool result already
// returned to the model) drop Hash's error; the session reads it back from
// here at its end (TakeBlobErr) so incomplete records still fail the run.
var blobErrs sync.Map // blob dir -> error

func noteBlobErr(dir string, err error) {
	blobErrs.LoadOrStore(dir, fmt.Errorf("records: %w", err))
}

// TakeBlobErr returns, and forgets, the first blob write failure under dir
// (a session's blobs/), or nil.
func TakeBlobErr(dir string) error {
	if v, ok := blobErrs.LoadAndDelete(dir); ok {
		return v.(error)
	}
	return nil
}

// writeBlob writes a content-addressed file once; an existing blob already
// holds these bytes. The temp-then-rename keeps a reader from seeing half.
func writeBlob(path string, body []byte) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat blob: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".blob-*")
	if err != nil {
		return fmt.Errorf("write blob: %w", err)
	}
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write blob: %w", err)
	}
	return nil
}
