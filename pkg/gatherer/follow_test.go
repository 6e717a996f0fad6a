package gatherer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	"github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// followWeb serves two hosts of n pages each, answering each page after
// delay, so that a harvest of them lasts a while.
func followWeb(t *testing.T, n int, delay time.Duration) (*harvestertest.Web, []string) {
	t.Helper()
	var urls []string
	hosts := []*harvestertest.Host{{Name: "a.test", Pages: map[string]*harvestertest.Page{}}, {Name: "b.test", Pages: map[string]*harvestertest.Page{}}}
	for _, h := range hosts {
		for i := range n {
			body := fmt.Sprintf(`<html lang="es"><title>%s %d</title><body><p>Página %d de %s, con texto suficiente para que se guarde.</p><a href="/p%d">siguiente</a> <a href="http://b.test/p%d">otra</a></body></html>`, h.Name, i, i, h.Name, i+1, i)
			h.Pages[fmt.Sprintf("/p%d", i)] = &harvestertest.Page{Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte(body), Delay: delay}
		}
	}
	web := harvestertest.Start(t, hosts...)
	for i := range n {
		for _, h := range hosts {
			urls = append(urls, web.URL(h.Name, fmt.Sprintf("/p%d", i)))
		}
	}
	urls = append(urls, web.URL("a.test", "/missing"))
	return web, urls
}

// TestFollowGathersWhileHarvested gathers a batch while the real
// harvester fetches it: the first documents are written before the
// harvest is published, and the result is the same, byte for byte, as
// gathering the published harvest afterwards.
func TestFollowGathersWhileHarvested(t *testing.T) {
	web, urls := followWeb(t, 20, 25*time.Millisecond)
	cfg := web.Config(0)
	col := harvestertest.NewCollection(t, t.TempDir(), cfg)
	b := col.Batch(1)
	harvestertest.WriteBatch(t, b.Dir, 1, harvestertest.Entries(urls...))

	o := options(t, col, b, 2)
	o.Follow = true
	var (
		mu         sync.Mutex
		firstDoc   time.Time
		docsBefore int
	)
	o.Progress = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if firstDoc.IsZero() {
			firstDoc = time.Now()
		}
		if !b.Done(collection.StageHarvested) {
			docsBefore = done
		}
		if total != len(urls) {
			t.Errorf("progress total %d, want the batch's %d URLs", total, len(urls))
		}
	}
	type outcome struct {
		sum *Summary
		err error
	}
	gathered := make(chan outcome, 1)
	go func() {
		s, err := Run(context.Background(), o)
		gathered <- outcome{s, err}
	}()
	if _, err := harvester.RunCollection(context.Background(), col, 1, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	harvested := time.Now()
	g := <-gathered
	if g.err != nil {
		t.Fatal(g.err)
	}
	if g.sum.Docs != len(urls) || g.sum.HTML != 2*20 {
		t.Errorf("followed: %d docs, %d HTML; want %d, %d", g.sum.Docs, g.sum.HTML, len(urls), 40)
	}
	mu.Lock()
	if firstDoc.IsZero() || !firstDoc.Before(harvested) || docsBefore == 0 {
		t.Errorf("no document was gathered while the harvest was written (first at %v, harvest published at %v, %d before)", firstDoc, harvested, docsBefore)
	}
	mu.Unlock()
	followed := readOutput(t, col, b)

	o.Follow, o.Progress = false, nil
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	again := readOutput(t, col, b)
	for name, data := range again {
		if !bytes.Equal(followed[name], data) {
			t.Errorf("%s differs between the followed gather and a gather of the published harvest", name)
		}
	}
}

// readOutput reads what a gather publishes: docs.jsonl and the batch's
// text segment files, by name.
func readOutput(t *testing.T, col *collection.Collection, b *collection.Batch) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	paths, err := filepath.Glob(filepath.Join(col.TextPath(), "seg-000001*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no text segment of batch 1 (%v)", err)
	}
	paths = append(paths, filepath.Join(b.ParsedPath(), "docs.jsonl"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// TestFollowLost: when the log read while the harvest was written is not
// the beginning of the published one (a rerun of a killed harvester
// repaired it), the batch is gathered again from the published harvest.
func TestFollowLost(t *testing.T) {
	web, urls := followWeb(t, 5, 0)
	cfg := web.Config(0)
	col := harvestertest.NewCollection(t, t.TempDir(), cfg)
	b := col.Batch(1)
	harvestertest.WriteBatch(t, b.Dir, 1, harvestertest.Entries(urls...))
	if _, err := harvester.RunCollection(context.Background(), col, 1, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	o := options(t, col, b, 2)
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := readOutput(t, col, b)

	// Put the harvest back as if it were being written, its log holding
	// the first lines in another order, then publish it as it was.
	recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ClearDone(collection.StageHarvested); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(b.Dir, collection.HarvestPartialDir)
	if err := os.Rename(b.HarvestPath(), partial); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(partial, fetchlog.LogFile)
	published, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	torn := fetchlog.Header() + recs[1].Format() + recs[0].Format()
	if err := os.WriteFile(logPath, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Follow = true
	var first sync.Once
	read := make(chan struct{})
	o.Progress = func(done, total int) { first.Do(func() { close(read) }) }
	gathered := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), o)
		gathered <- err
	}()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower read nothing of the partial log")
	}
	if err := os.WriteFile(logPath, published, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(partial, b.HarvestPath()); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkDone(collection.StageHarvested, map[string]int{"urls": len(urls)}); err != nil {
		t.Fatal(err)
	}
	if err := <-gathered; err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, col, b)
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s differs from a gather of the published harvest", name)
		}
	}
}
