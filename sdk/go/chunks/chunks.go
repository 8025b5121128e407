// Package chunks streams text from a running tool or driver call to the
// host through murmur:text/chunks@0.1.0, ahead of the call's final result:
//
//	if err := chunks.Emit(delta); err != nil {
//		// nobody follows the call any more: finish up
//	}
//
// Emit exists only in a wasip1 guest.
package chunks

import "errors"

// ErrClosed is wrapped by Emit's error once the host no longer takes text
// for the call (it was canceled, or no call is in progress).
var ErrClosed = errors.New("text stream closed")
