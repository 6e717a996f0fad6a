package faulttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/wirecrawl/wire/pkg/collection"
)

// graphDamages are the ways graph.db is broken (docs/faults.md).
var graphDamages = []struct {
	name   string
	damage func(path string) error
}{
	{"graph-truncated", truncateInUse},
	{"graph-random-page", overwriteRootPage},
	{"graph-emptied", func(path string) error { return os.Truncate(path, 0) }},
	{"graph-deleted", os.Remove},
}

// graphFaults breaks graph.db of a seeded collection in each of
// graphDamages and checks that the manager, the seeder and seeder check
// each fail with exit code 6 and one line naming graph.db and the
// repair; that seeder restore brings back the same graph (seeder stats
// alike); and that the crawl then goes on: a full cycle, then every check
// of CheckCollection (nothing lost or doubled).
func graphFaults(ctx context.Context, fresh freshFunc, st states) ([]EnvCase, error) {
	var out []EnvCase
	for _, d := range graphDamages {
		c := EnvCase{Name: d.name}
		r, err := fresh(c.Name, st.seeded)
		if err != nil {
			return out, err
		}
		before, err := r.Run(ctx, "seeder", "stats", "--collection", r.Collection)
		if err != nil {
			return out, err
		}
		if err := d.damage(filepath.Join(r.Collection, collection.GraphFile)); err != nil {
			return out, err
		}
		want := regexp.MustCompile(`graph\.db is damaged: .*seeder restore`)
		for _, args := range [][]string{{"manager", "run"}, {"seeder", "check"}, {"seeder", "run", "--batch", "2", "--force"}} {
			res, err := r.Run(ctx, args[0], append(args[1:], "--collection", r.Collection)...)
			if err != nil {
				return out, err
			}
			expectOneLine(&c, res, exitDamaged, want)
			if c.Problem != "" {
				break
			}
		}
		if c.Problem == "" {
			c.Problem = restoreAndGoOn(ctx, r, before.Stdout)
		}
		if c.Problem == "" {
			c.Note = "manager, seeder run and check: exit 6, one line; seeder restore: same stats; a cycle, then every check"
		}
		out = append(out, c)
	}
	return out, nil
}

// restoreAndGoOn runs seeder restore, compares seeder stats with stats
// (what it printed before the damage), runs a crawl cycle and checks the
// collection; it returns the problem, or "".
func restoreAndGoOn(ctx context.Context, r *Runner, stats string) string {
	res, err := r.Run(ctx, "seeder", "restore", "--collection", r.Collection)
	if err != nil || res.Code != exitOK {
		return fmt.Sprintf("seeder restore: %v %s", err, res)
	}
	after, err := r.Run(ctx, "seeder", "stats", "--collection", r.Collection)
	if err != nil || after.Code != exitOK {
		return fmt.Sprintf("seeder stats after restore: %v %s", err, after)
	}
	if after.Stdout != stats {
		return fmt.Sprintf("seeder stats after restore differ:\n%s\nwant\n%s", after.Stdout, stats)
	}
	for _, stage := range Stages() {
		res, err := r.Stage(ctx, stage)
		if err != nil || (res.Code != exitOK && res.Code != exitNothing) {
			return fmt.Sprintf("after restore, %s: %v %s", stage, err, res)
		}
	}
	rep, err := CheckCollection(ctx, r, CheckOptions{Seed: 1})
	if err != nil {
		return fmt.Sprintf("check after restore: %v", err)
	}
	if len(rep.Problems) > 0 {
		return fmt.Sprintf("check after restore: %d problems, first: %v", len(rep.Problems), rep.Problems[0])
	}
	return ""
}

// newerMeta returns the root page, the high-water mark and the page size
// of the newer of graph.db's meta pages (bbolt's layout: a 16-byte page
// header, then magic, version, page size, flags, root, sequence,
// freelist, high-water mark, txid; little-endian on the machines we run
// on).
func newerMeta(data []byte) (root, pgid uint64, pageSize int) {
	u64 := func(b []byte) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	pageSize = int(u64(data[16+8:]) & 0xffffffff)
	meta := data[16:]
	if len(data) > pageSize+80 && u64(data[pageSize+16+48:]) > u64(meta[48:]) {
		meta = data[pageSize+16:]
	}
	return u64(meta[16:]), u64(meta[40:]), pageSize
}

// truncateInUse cuts graph.db to half of the pages in use (the file
// itself is longer: bbolt grows it in steps).
func truncateInUse(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, pgid, ps := newerMeta(data)
	return os.Truncate(path, int64(pgid)*int64(ps)/2)
}

// overwriteRootPage overwrites with bytes that are no bbolt page the root
// page of graph.db: a page every reader needs.
func overwriteRootPage(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	root, _, ps := newerMeta(data)
	junk := make([]byte, ps)
	for i := range junk {
		junk[i] = byte(i*131 + 7)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(junk, int64(root)*int64(ps))
	return err
}
