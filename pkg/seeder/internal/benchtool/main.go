// Command benchtool is scripts/bench-seeder.sh's helper:
//
//	benchtool gen [-pages N] [-links L] [-sites S] [-no-simhash] DIR
//	    writes a collection in DIR with a gathered batch (pkg/seeder/internal/benchgen)
//	    and a copy of its graph.db before the batch as DIR.before.db
//	benchtool plain [-fill F] BEFORE.db AFTER.db OUT.db
//	    the storage limit of the seeder's design: copies BEFORE.db to OUT.db
//	    and puts into it, in one bbolt transaction, every key and value that
//	    the seeder's run added or rewrote in AFTER.db (urls and docs in id
//	    order, the order the seeder creates them, then out-links, in-links and
//	    the site graph); prints the seconds the transaction took. With -fill,
//	    the buckets keyed by id (docs, out, in) split their pages filled to
//	    F, as the seeder's own transactions do (linkgraph's idFill); without
//	    it, bbolt's default (0.5) everywhere: the naive load
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/seeder/internal/benchgen"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "plain":
		fs := flag.NewFlagSet("plain", flag.ExitOnError)
		fill := fs.Float64("fill", 0, "fill percent of the docs, out and in buckets (0: bbolt's default)")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 3 {
			usage()
		}
		err = plain(fs.Arg(0), fs.Arg(1), fs.Arg(2), *fill)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchtool gen [-pages N] [-links L] [-sites S] [-no-simhash] DIR | benchtool plain [-fill F] BEFORE.db AFTER.db OUT.db")
	os.Exit(2)
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	spec := benchgen.Default
	fs.IntVar(&spec.Pages, "pages", spec.Pages, "fetched pages in the batch")
	fs.IntVar(&spec.LinksPerPage, "links", spec.LinksPerPage, "average links per page")
	fs.IntVar(&spec.Sites, "sites", spec.Sites, "sites")
	fs.BoolVar(&spec.NoSimhash, "no-simhash", false, "pages without simhash: no near-duplicate grouping")
	fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	dir := fs.Arg(0)
	info, err := benchgen.Generate(dir, spec)
	if err != nil {
		return err
	}
	if err := copyFile(dir+"/graph.db", dir+".before.db"); err != nil {
		return err
	}
	fmt.Printf("generated %s: %d pages, %d links\n", dir, spec.Pages, info.Links)
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

type kv struct{ k, v []byte }

// idBuckets are the buckets that -fill applies to.
var idBuckets = map[string]bool{"docs": true, "out": true, "in": true}

// plain measures the bulk load of what the seeder wrote; fill, if not 0,
// is the fill percent of the buckets keyed by id.
func plain(before, after, out string, fill float64) error {
	if err := copyFile(before, out); err != nil {
		return err
	}
	old, err := bolt.Open(before, 0o644, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return err
	}
	nw, err := bolt.Open(after, 0o644, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return err
	}
	// The changed keys, per bucket, in the order to load them.
	loads := map[string][]kv{}
	order := []string{"urls", "docs", "out", "in", "sitelinks", "siterec", "sites", "meta", "batches"}
	err = nw.View(func(ntx *bolt.Tx) error {
		return old.View(func(otx *bolt.Tx) error {
			for _, name := range order {
				nb := ntx.Bucket([]byte(name))
				if nb == nil {
					continue
				}
				ob := otx.Bucket([]byte(name))
				var list []kv
				nb.ForEach(func(k, v []byte) error {
					if ob != nil && bytes.Equal(ob.Get(k), v) {
						return nil
					}
					list = append(list, kv{bytes.Clone(k), bytes.Clone(v)})
					return nil
				})
				if name == "urls" {
					// The seeder creates URLs in id order: their keys come
					// in that order, not sorted.
					sort.Slice(list, func(i, j int) bool {
						return binary.BigEndian.Uint64(list[i].v) < binary.BigEndian.Uint64(list[j].v)
					})
				}
				loads[name] = list
			}
			return nil
		})
	})
	old.Close()
	nw.Close()
	if err != nil {
		return err
	}
	db, err := bolt.Open(out, 0o644, linkgraph.BoltOptions(false, time.Second))
	if err != nil {
		return err
	}
	defer db.Close()
	start, cpu0 := time.Now(), cpuTime()
	keys := 0
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range order {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			if fill != 0 && idBuckets[name] {
				b.FillPercent = fill
			}
			for _, e := range loads[name] {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
				keys++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("plain bbolt load: %d keys, cpu %.2f s, in %.2f s\n", keys, (cpuTime() - cpu0).Seconds(), time.Since(start).Seconds())
	return nil
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
