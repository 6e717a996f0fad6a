package status

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockTable is the kernel's table of held file locks, read from
// /proc/locks: which process holds a lock on which file. Reading it
// never disturbs a lock, unlike trying to take one.
type lockTable map[fileID]int

// fileID names a file by device and inode, as /proc/locks does.
type fileID struct {
	major, minor uint64
	ino          uint64
}

// readLocks reads /proc/locks; on a system without it the table is
// empty and no stage is reported running.
func readLocks() lockTable {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return lockTable{}
	}
	defer f.Close()
	return parseLocks(bufio.NewScanner(f))
}

// parseLocks reads lines such as
//
//	1: FLOCK  ADVISORY  WRITE 4242 fd:01:1573402 0 EOF
//
// keeping the granted locks (blocked waiters are marked "->").
func parseLocks(sc *bufio.Scanner) lockTable {
	t := lockTable{}
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil {
			continue
		}
		parts := strings.Split(fields[5], ":")
		if len(parts) != 3 {
			continue
		}
		major, err1 := strconv.ParseUint(parts[0], 16, 64)
		minor, err2 := strconv.ParseUint(parts[1], 16, 64)
		ino, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		t[fileID{major, minor, ino}] = pid
	}
	return t
}

// holder returns the pid of the live process holding a lock on path.
func (t lockTable) holder(path string) (int, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	dev := uint64(st.Dev)
	id := fileID{major: devMajor(dev), minor: devMinor(dev), ino: st.Ino}
	pid, ok := t[id]
	return pid, ok
}

// devMajor and devMinor split a Linux device number (glibc's encoding).
func devMajor(dev uint64) uint64 { return ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xfffff000) }
func devMinor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) & 0xffffff00) }
