package textstore

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing the n bytes at off of
// f to the disk now, without waiting (sync_file_range with
// SYNC_FILE_RANGE_WRITE): a later fsync then finds most of the data
// written or on its way instead of starting it all. It is a hint only —
// durability still comes from Sync — so failures are ignored. (The same
// as pkg/warcio's, which the harvester's WARC files use.)
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		_ = syscall.SyncFileRange(int(fd), off, n, 0x2 /* SYNC_FILE_RANGE_WRITE */)
	})
}
