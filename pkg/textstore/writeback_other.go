//go:build !linux

package textstore

import "os"

// startWriteback is a no-op where the kernel has no way to start the
// writeback of a range early (Linux's sync_file_range); Sync does it all.
func startWriteback(f *os.File, off, n int64) {}
