package wasi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// FSCode is a case of wasi:filesystem/types.error-code, by its WIT name.
type FSCode string

// The error-code cases this host produces. Escapes and other policy
// refusals are CodeNotPermitted; writes under a read-only subtree are
// CodeAccess.
const (
	CodeAccess        FSCode = "access"
	CodeWouldBlock    FSCode = "would-block"
	CodeBadDescriptor FSCode = "bad-descriptor"
	CodeBusy          FSCode = "busy"
	CodeQuota         FSCode = "quota"
	CodeExist         FSCode = "exist"
	CodeFileTooLarge  FSCode = "file-too-large"
	CodeInterrupted   FSCode = "interrupted"
	CodeInvalid       FSCode = "invalid"
	CodeIO            FSCode = "io"
	CodeIsDirectory   FSCode = "is-directory"
	CodeLoop          FSCode = "loop"
	CodeTooManyLinks  FSCode = "too-many-links"
	CodeNameTooLong   FSCode = "name-too-long"
	CodeNoEntry       FSCode = "no-entry"
	CodeNoSpace       FSCode = "insufficient-space"
	CodeNotDirectory  FSCode = "not-directory"
	CodeNotEmpty      FSCode = "not-empty"
	CodeUnsupported   FSCode = "unsupported"
	CodeNotPermitted  FSCode = "not-permitted"
	CodeReadOnly      FSCode = "read-only"
	CodeInvalidSeek   FSCode = "invalid-seek"
	CodeTextFileBusy  FSCode = "text-file-busy"
	CodeCrossDevice   FSCode = "cross-device"
)

// Sentinels for the policy refusals, so callers and tests can tell them
// apart from plain I/O failures with errors.Is.
var (
	// ErrEscape is a path that would leave its preopen (absolute, "..", or
	// a symlink pointing out).
	ErrEscape = errors.New("path escapes the granted directory")
	// ErrReadOnly is a write under a filesystem.read_only subtree.
	ErrReadOnly = errors.New("path is under a read-only subtree")
	// ErrDenied is a network destination network.allow does not list.
	ErrDenied = errors.New("destination not in network.allow")
)

// FSError is a filesystem failure carrying the WASI code the guest sees.
type FSError struct {
	Code FSCode
	Op   string
	Path string
	Err  error
}

func (e *FSError) Error() string {
	return fmt.Sprintf("%s %q: %v (%s)", e.Op, e.Path, e.Err, e.Code)
}

func (e *FSError) Unwrap() error { return e.Err }

// fsErr wraps err from op on path with the WASI code it maps to.
func fsErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	return &FSError{Code: CodeOf(err), Op: op, Path: p, Err: err}
}

// CodeOf maps an error to the wasi:filesystem error-code the guest sees.
func CodeOf(err error) FSCode {
	var fe *FSError
	if errors.As(err, &fe) {
		return fe.Code
	}
	switch {
	case errors.Is(err, ErrEscape):
		return CodeNotPermitted
	case errors.Is(err, ErrReadOnly):
		return CodeAccess
	case errors.Is(err, os.ErrClosed):
		return CodeBadDescriptor
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if c, ok := errnoCodes[errno]; ok {
			return c
		}
		return CodeIO
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return CodeNoEntry
	case errors.Is(err, fs.ErrExist):
		return CodeExist
	case errors.Is(err, fs.ErrPermission):
		return CodeAccess
	case errors.Is(err, fs.ErrInvalid):
		return CodeInvalid
	}
	return CodeIO
}

var errnoCodes = map[syscall.Errno]FSCode{
	syscall.EACCES:       CodeAccess,
	syscall.EAGAIN:       CodeWouldBlock,
	syscall.EBADF:        CodeBadDescriptor,
	syscall.EBUSY:        CodeBusy,
	syscall.EDQUOT:       CodeQuota,
	syscall.EEXIST:       CodeExist,
	syscall.EFBIG:        CodeFileTooLarge,
	syscall.EINTR:        CodeInterrupted,
	syscall.EINVAL:       CodeInvalid,
	syscall.EIO:          CodeIO,
	syscall.EISDIR:       CodeIsDirectory,
	syscall.ELOOP:        CodeLoop,
	syscall.EMLINK:       CodeTooManyLinks,
	syscall.ENAMETOOLONG: CodeNameTooLong,
	syscall.ENOENT:       CodeNoEntry,
	syscall.ENOSPC:       CodeNoSpace,
	syscall.ENOTDIR:      CodeNotDirectory,
	syscall.ENOTEMPTY:    CodeNotEmpty,
	syscall.ENOTSUP:      CodeUnsupported,
	syscall.EPERM:        CodeNotPermitted,
	syscall.EROFS:        CodeReadOnly,
	syscall.ESPIPE:       CodeInvalidSeek,
	syscall.ETXTBSY:      CodeTextFileBusy,
	syscall.EXDEV:        CodeCrossDevice,
}
