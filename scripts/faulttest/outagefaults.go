package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// exitNetworkDown is the harvester's exit code for a network outage
// (pkg/command ExitNetworkDown).
const exitNetworkDown = 5

// outageCases are the network outage faults of issue 17: the test
// web's DNS server refuses every query from the start of a harvest, and
// goes away in the middle of one (answers cached for 50 ms, a new
// connection per request 300 ms apart, so the harvester needs the
// resolver again).
// Each must stop the harvester with exit code 5 and one line, log
// nothing of the outage, leave the batch resumable, and a rerun once the
// resolver is back must finish the batch with no more failures than the
// same batch harvested with the network up.
func outageCases(ctx context.Context, fresh freshFunc, st states, web *testweb.Web) []func() (EnvCase, error) {
	return []func() (EnvCase, error){
		func() (EnvCase, error) { return resolverDown(ctx, fresh, st, web, false) },
		func() (EnvCase, error) { return resolverDown(ctx, fresh, st, web, true) },
	}
}

// resolverDown runs one outage case.
func resolverDown(ctx context.Context, fresh freshFunc, st states, web *testweb.Web, midBatch bool) (EnvCase, error) {
	c := EnvCase{Name: "resolver-down"}
	if midBatch {
		c.Name = "resolver-down-mid-batch"
	}
	r, err := fresh(c.Name, st.managed)
	if err != nil {
		return c, err
	}
	defer web.SetDNSDown(testweb.DNSUp)
	b := &collection.Batch{ID: 2, Dir: filepath.Join(r.Collection, collection.BatchesDir, "000002")}
	partialLog := filepath.Join(b.Dir, collection.HarvestPartialDir, fetchlog.LogFile)
	r.Env = []string{"WIRE_HARVESTER_DNS_TIMEOUT=300ms"}
	var res Result
	if !midBatch {
		if err := web.SetDNSDown(testweb.DNSRefused); err != nil {
			return c, err
		}
		if res, err = r.Stage(ctx, "harvester"); err != nil {
			return c, err
		}
	} else {
		r.Env = append(r.Env, "WIRE_HARVESTER_DNS_MIN_TTL=50ms", "WIRE_HARVESTER_DNS_MAX_TTL=50ms", "WIRE_HARVESTER_MAX_IDLE=10ms", "WIRE_HARVESTER_WAIT=300ms", "WIRE_HARVESTER_CONNECTIONS=40")
		p, err := r.Start(ctx, "harvester", "run", "--collection", r.Collection)
		if err != nil {
			return c, err
		}
		for deadline := time.Now().Add(30 * time.Second); countRecords(partialLog) < 5; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				p.Kill()
				p.Wait()
				c.Problem = "the harvest logged fewer than 5 URLs in 30 s"
				return c, nil
			}
		}
		if err := web.SetDNSDown(testweb.DNSRefused); err != nil {
			p.Kill()
			p.Wait()
			return c, err
		}
		if res, err = p.Wait(); err != nil {
			return c, err
		}
	}
	expectOneLine(&c, res, exitNetworkDown, regexp.MustCompile(`network down: .* in a row`))
	if c.Problem != "" {
		return c, nil
	}
	if b.Done(collection.StageHarvested) {
		c.Problem = "the batch was marked harvested"
		return c, nil
	}
	logged, _ := fetchlog.ReadFile(partialLog)
	for _, rec := range logged {
		if isOutageError(rec.Err) {
			c.Problem = fmt.Sprintf("logged during the outage: %s %s", rec.URL, rec.Err)
			return c, nil
		}
	}
	if err := web.SetDNSDown(testweb.DNSUp); err != nil {
		return c, err
	}
	r.Env = nil
	again, err := r.Stage(ctx, "harvester")
	if err != nil {
		return c, err
	}
	if again.Code != exitOK {
		c.Problem = fmt.Sprintf("rerun with the resolver back: %s", again)
		return c, nil
	}
	got, err := harvestErrors(b.Dir)
	if err != nil {
		return c, err
	}
	want, err := harvestErrors(filepath.Join(st.harvested, collection.BatchesDir, "000002"))
	if err != nil {
		return c, err
	}
	for _, kind := range []string{"dns", "connect", "host-gave-up"} {
		if got[kind] > want[kind] {
			c.Problem = fmt.Sprintf("after the rerun %d %s errors, %d with the network up", got[kind], kind, want[kind])
			return c, nil
		}
	}
	recs, err := fetchlog.ReadFile(filepath.Join(b.Dir, "harvest", fetchlog.LogFile))
	if err != nil {
		return c, err
	}
	for _, rec := range recs {
		if isOutageError(rec.Err) {
			c.Problem = fmt.Sprintf("counted failed: %s %s", rec.URL, rec.Err)
			return c, nil
		}
	}
	c.Note = fmt.Sprintf("%d URLs logged before the outage; the rerun finished the batch, %d errors as with the network up", len(logged), sum(got))
	return c, nil
}

// isOutageError tells whether a fetch log error is the resolver's
// failure (the outage's wording in pkg/fetch).
func isOutageError(text string) bool {
	if strings.HasPrefix(text, "robots") {
		return false // "robots: robots.txt unreachable (status 500)": the server's answer
	}
	return strings.HasPrefix(text, "dns:") && (strings.Contains(text, "refused") || strings.Contains(text, "timeout") || strings.Contains(text, "misbehaving")) ||
		strings.Contains(text, "unreachable") || strings.Contains(text, "no route")
}

// countRecords counts the lines of a fetch log being written (0 when
// missing).
func countRecords(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "\n") - 1 // the header line
}

// harvestErrors reads the errors by kind of a batch's harvested.done.
func harvestErrors(batchDir string) (map[string]int, error) {
	data, err := os.ReadFile(filepath.Join(batchDir, collection.MarkerFile(collection.StageHarvested)))
	if err != nil {
		return nil, err
	}
	var s struct {
		Errors map[string]int `json:"errors"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read the harvest summary of %s: %w", batchDir, err)
	}
	return s.Errors, nil
}

// sum adds the counts up.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
