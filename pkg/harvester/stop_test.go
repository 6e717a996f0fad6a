package harvester_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// cancelWhen cancels the run as soon as the server has started n
// requests to page paths, and returns when it did.
func cancelWhen(web *ht.Web, n int, cancel context.CancelFunc) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for {
			started := 0
			for _, r := range web.Started() {
				if r.Path != "/robots.txt" {
					started++
				}
			}
			if started >= n {
				at <- time.Now()
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return at
}

// TestStopFinishesInFlight: on SIGINT (a cancelled context) no request is
// started any more, the requests in flight finish within stop_timeout and
// are logged, and the run ends with ErrInterrupted; a second run fetches
// only what is missing.
func TestStopFinishesInFlight(t *testing.T) {
	var hosts []*ht.Host
	var urls []string
	for i := 0; i < 3; i++ {
		hosts = append(hosts, pagesHost(fmt.Sprintf("s%d.test", i), 4, 400*time.Millisecond))
	}
	web := ht.Start(t, hosts...)
	for p := 0; p < 4; p++ {
		for i := 0; i < 3; i++ {
			urls = append(urls, web.URL(fmt.Sprintf("s%d.test", i), fmt.Sprintf("/p%d", p)))
		}
	}
	cfg := web.Config(10 * time.Millisecond)
	cfg.Harvester.StopTimeout = config.Duration(3 * time.Second)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	ctx, cancel := context.WithCancel(context.Background())
	at := cancelWhen(web, 3, cancel)
	_, err := harvester.RunDir(ctx, dir, harvester.Options{Config: cfg})
	ended := time.Now()
	cancelled := <-at
	if !errors.Is(err, harvester.ErrInterrupted) {
		t.Fatalf("%v, want ErrInterrupted", err)
	}
	if d := ended.Sub(cancelled); d > 1500*time.Millisecond {
		t.Errorf("stopped %v after the signal; the requests in flight needed 400 ms", d)
	}
	for _, r := range web.Requests() {
		if r.Start.After(cancelled.Add(5 * time.Millisecond)) {
			t.Errorf("%s%s started after the signal", r.Host, r.Path)
		}
	}
	logged := readLog(t, filepath.Join(dir, harvester.PartialDir))
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" {
			if _, ok := logged[web.URL(r.Host, r.Path)]; !ok {
				t.Errorf("%s%s was answered in time but not logged", r.Host, r.Path)
			}
		}
	}
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.URLs != len(urls) || !sum.Resumed || sum.RunFetched != len(urls)-len(logged) {
		t.Fatalf("resume: %+v %v", sum, err)
	}
}

// TestStopAbandonsSlow: a request still in flight when stop_timeout
// expires is abandoned and not logged (a resumed run fetches it).
func TestStopAbandonsSlow(t *testing.T) {
	web := ht.Start(t, &ht.Host{Name: "slow.test", Pages: map[string]*ht.Page{"/slow": {Body: []byte("late"), Delay: 3 * time.Second}, "/fast": html("x")}})
	cfg := web.Config(10 * time.Millisecond)
	cfg.Harvester.StopTimeout = config.Duration(200 * time.Millisecond)
	cfg.Harvester.FirstByteTimeout = config.Duration(10 * time.Second)
	cfg.Harvester.ReadTimeout = config.Duration(10 * time.Second)
	cfg.Harvester.TotalTimeout = config.Duration(10 * time.Second)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(web.URL("slow.test", "/fast"), web.URL("slow.test", "/slow")))
	ctx, cancel := context.WithCancel(context.Background())
	at := cancelWhen(web, 2, cancel)
	_, err := harvester.RunDir(ctx, dir, harvester.Options{Config: cfg})
	ended := time.Now()
	cancelled := <-at
	if !errors.Is(err, harvester.ErrInterrupted) {
		t.Fatalf("%v, want ErrInterrupted", err)
	}
	if d := ended.Sub(cancelled); d < 150*time.Millisecond || d > time.Second {
		t.Errorf("stopped %v after the signal, want about the 200 ms stop_timeout", d)
	}
	logged := readLog(t, filepath.Join(dir, harvester.PartialDir))
	if _, ok := logged[web.URL("slow.test", "/slow")]; ok || len(logged) != 1 {
		t.Errorf("logged %v: the abandoned request must not be", logged)
	}
}
