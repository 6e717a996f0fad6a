package collection

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/wirecrawl/wire/pkg/tally"
)

// ErrDiskFull is the cause of a stage that stopped, or did not start,
// because the file system of the collection has no more free space than
// collection.min_free (exit code 7; docs/operations.md, "A full disk").
var ErrDiskFull = errors.New("disk full")

// Space is the room on the file system that holds a directory.
type Space struct {
	Free int64 // bytes an unprivileged process may still write (f_bavail)
	Size int64 // bytes of the file system (f_blocks)
}

// StatSpace returns the room on the file system that holds dir: one
// statfs call, cheap enough to make every few seconds.
func StatSpace(dir string) (Space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Space{}, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return Space{Free: int64(st.Bavail) * int64(st.Bsize), Size: int64(st.Blocks) * int64(st.Bsize)}, nil
}

// Keeper is a rule for the free space to keep on a file system of a
// given size (config.FreeSpace).
type Keeper interface {
	Of(size int64) int64
}

// DiskFull is the error of a stage stopped by a full disk: what it
// needed, what is free, what must stay free, and what to do.
type DiskFull struct {
	Dir   string // the directory whose file system is full
	Space Space  // its room when checked
	Keep  int64  // bytes collection.min_free keeps free
	Need  int64  // bytes the stage expected to write (0: none known)
	Hint  string // what to do, e.g. "run 'gatherer compact'"
}

func (e *DiskFull) Error() string {
	need := ""
	if e.Need > 0 {
		need = fmt.Sprintf(" and about %s more is needed", tally.Bytes(e.Need))
	}
	msg := fmt.Sprintf("disk full: %s has %s free of %s, collection.min_free keeps %s%s", e.Dir,
		tally.Bytes(e.Space.Free), tally.Bytes(e.Space.Size), tally.Bytes(e.Keep), need)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Unwrap makes a DiskFull an ErrDiskFull.
func (e *DiskFull) Unwrap() error { return ErrDiskFull }

// DiskFullHint is what to do about a full disk, said by every stage that
// stops for one.
const DiskFullHint = "free space (remove or move old WARC files of seeded batches, batches/N/harvest/*.warc.gz; 'gatherer compact' reclaims replaced texts) or lower collection.min_free, then run again: nothing was lost"

// CheckFree returns a *DiskFull error when writing need more bytes into
// dir would leave less free than keep asks (nil keeps nothing), else nil.
func CheckFree(dir string, keep Keeper, need int64, hint string) error {
	if keep == nil {
		return nil
	}
	sp, err := StatSpace(dir)
	if err != nil {
		return err
	}
	k := keep.Of(sp.Size)
	if k <= 0 {
		return nil
	}
	if sp.Free-max(need, 0) < k {
		return &DiskFull{Dir: dir, Space: sp, Keep: k, Need: need, Hint: hint}
	}
	return nil
}

// DiskUse returns the bytes the files under dir take on disk (their
// allocated blocks, as du counts them; hard links once).
func DiskUse(dir string) (int64, error) {
	var total int64
	seen := map[[2]uint64]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walk (a stage publishing)
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
			if seen[key] {
				return nil
			}
			seen[key] = true
		}
		total += int64(st.Blocks) * 512
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("disk use of %s: %w", dir, err)
	}
	return total, nil
}

// BytesPerURL measures what a batch costs on disk per URL from the
// newest (up to last) batches whose harvest is done: the disk use of
// their directories (batch file, harvest, parsed output) and of their
// text segments, over the URLs of their harvests. n is the number of
// batches measured (0: nothing to measure yet, perURL is 0).
func (c *Collection) BytesPerURL(last int) (perURL int64, n int, err error) {
	ids, err := c.BatchIDs()
	if err != nil {
		return 0, 0, err
	}
	var bytes, urls int64
	for i := len(ids) - 1; i >= 0 && n < last; i-- {
		b := c.Batch(ids[i])
		var sum struct {
			URLs int64 `json:"urls"`
		}
		if !b.Done(StageHarvested) || b.Summary(StageHarvested, &sum) != nil || sum.URLs <= 0 {
			continue
		}
		use, err := DiskUse(b.Dir)
		if err != nil {
			return 0, 0, err
		}
		segs, _ := filepath.Glob(filepath.Join(c.TextPath(), "seg-"+b.Name()+"*"))
		for _, s := range segs {
			if u, err := DiskUse(s); err == nil {
				use += u
			}
		}
		bytes += use
		urls += sum.URLs
		n++
	}
	if urls == 0 {
		return 0, 0, nil
	}
	return (bytes + urls - 1) / urls, n, nil
}
