package collection

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// AtomicFile is a file written under a temporary name in its final
// directory and renamed into place by Commit, so readers and a crashed
// writer's successor see either the old content or the complete new one.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// CreateAtomic starts writing path. Call Commit to publish it, or Abort
// (safe after Commit) to discard it; `defer f.Abort()` is the usual form.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	return &AtomicFile{File: f, path: path}, nil
}

// Commit flushes the file to disk, renames it to its final name and syncs
// the directory so the rename itself survives a crash.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("commit %s: already finished", a.path)
	}
	a.done = true
	tmp := a.File.Name()
	if err := a.File.Sync(); err != nil {
		a.File.Close()
		os.Remove(tmp)
		return fmt.Errorf("sync %s: %w", a.path, err)
	}
	if err := a.File.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("close %s: %w", a.path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("chmod %s: %w", a.path, err)
	}
	if err := os.Rename(tmp, a.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename %s: %w", a.path, err)
	}
	return SyncDir(filepath.Dir(a.path))
}

// Abort discards the temporary file unless Commit already published it.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.File.Close()
	os.Remove(a.File.Name())
}

// WriteFileAtomic writes data to path atomically (temp file, fsync, rename).
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic writes path atomically with the content that write produces.
// If write fails, path is left as it was.
func WriteAtomic(path string, write func(io.Writer) error) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// SyncDir fsyncs a directory so that renames and creations inside it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// ReplaceDir atomically publishes the fully written directory tmp as dir:
// an existing dir is moved aside first and removed after the rename, so a
// crash leaves either the old directory, the new one, or a leftover that
// RemoveStale cleans.
func ReplaceDir(tmp, dir string) error {
	old := dir + ".old"
	os.RemoveAll(old)
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move aside %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("publish %s: %w", dir, err)
	}
	if err := SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	return os.RemoveAll(old)
}
