package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// TestCancelDuringShardHarvest: `manager cancel` on a batch harvested by
// two shards. Shard 1 has finished (harvest-shard-1-of-2/ and its
// marker), shard 2 is running (it holds its locks and writes
// harvest-shard-2-of-2.partial/): cancel refuses with exit 4, even with
// --force, naming the shard. Once shard 2 has stopped, cancel refuses
// the started harvest (exit 1) unless --force, which rolls the batch
// back.
func TestCancelDuringShardHarvest(t *testing.T) {
	// Shard 2's page answers only when the test lets it (or after a
	// bounded wait), so that shard 2 is running while cancel runs.
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	blocking := &ht.Page{Handler: func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte("<html>late</html>"))
	}}
	// One host per shard (shards go by registrable domain).
	var hosts []*ht.Host
	var names [3]string // names[i] is shard i's host
	for i := 0; names[1] == "" || names[2] == ""; i++ {
		name := fmt.Sprintf("h%d.test", i)
		if s := harvester.Of(name, 2); names[s] == "" {
			names[s] = name
			page := &ht.Page{Body: []byte("<html>" + name + "</html>")}
			if s == 2 {
				page = blocking
			}
			hosts = append(hosts, &ht.Host{Name: name, Pages: map[string]*ht.Page{"/": page}})
		}
	}
	web := ht.Start(t, hosts...)
	cfg := web.Config(10 * time.Millisecond)
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, cfg)
	addPages(t, dir, web.URL(names[1], "/"), web.URL(names[2], "/"))
	code, out, errOut := runApp(t, "run", "-c", dir, "-q", "--manager-strategy", "backlink")
	if code != command.ExitOK || !strings.Contains(out, "urls        2") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	b := col.Batch(1)

	if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg, Shard: harvester.Shard{I: 1, N: 2}}); err != nil {
		t.Fatalf("shard 1: %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := harvester.RunCollection(ctx, col, 0, harvester.Options{Config: cfg, Shard: harvester.Shard{I: 2, N: 2}})
		done <- err
	}()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("shard 2 ended before fetching its page: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("shard 2 did not fetch its page within 10 s")
	}
	for _, name := range []string{collection.ShardHarvestDir(1, 2), collection.ShardMarker(1, 2), collection.ShardPartialDir(2, 2)} {
		if _, err := os.Stat(filepath.Join(b.Dir, name)); err != nil {
			t.Fatalf("the two-shard harvest has no %s: %v", name, err)
		}
	}

	code, _, errOut = runApp(t, "cancel", "-c", dir, "--force")
	if code != command.ExitLocked || !strings.Contains(errOut, "harvester shard 2/2 is running") {
		t.Errorf("cancel while shard 2 runs: exit %d, want %d: %s", code, command.ExitLocked, errOut)
	}
	if !b.Done(collection.StageManaged) {
		t.Fatal("the batch was removed under a running shard")
	}

	stop()
	close(release)
	if err := <-done; !errors.Is(err, harvester.ErrInterrupted) {
		t.Fatalf("shard 2 stopped with %v, want an interrupted harvest", err)
	}
	code, _, errOut = runApp(t, "cancel", "-c", dir)
	if code != command.ExitFailure || !strings.Contains(errOut, "harvest of the batch has started") ||
		!strings.Contains(errOut, collection.ShardPartialDir(2, 2)) || !strings.Contains(errOut, collection.ShardMarker(1, 2)) {
		t.Errorf("cancel of a started two-shard harvest: exit %d: %s", code, errOut)
	}
	code, out, errOut = runApp(t, "cancel", "-c", dir, "--force")
	if code != command.ExitOK || !strings.Contains(out, "cancelled batch 000001: 2 pages") {
		t.Errorf("cancel --force: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(b.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("batch directory after cancel: %v", err)
	}
}

// addPages adds pending pages to the collection's graph, one site each.
func addPages(t *testing.T, dir string, urls ...string) {
	t.Helper()
	g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Update(func(tx *linkgraph.Tx) error {
		for _, u := range ht.Entries(urls...) {
			site, _, err := tx.AddSite(u.Site)
			if err != nil {
				return err
			}
			if _, _, err := tx.AddURL(u.URL, site, 0, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
