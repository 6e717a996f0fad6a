package faulttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// followKilled: a following harvester (harvester run --follow) is
// killed (SIGKILL) with two batches in flight — batch 3, and batch 4,
// which the manager wrote while batch 3 was being harvested and the
// harvester took beside it — and run again with --follow: both batches
// are published (the harvester verifies one fetch log line per URL
// before it publishes), gathered and seeded, and `seeder check` passes
// (docs/harvester.md, "Following the batches").
func followKilled(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "follow-killed"}
	r, err := fresh(c.Name, st.seeded)
	if err != nil {
		return c, err
	}
	// A slower harvest, so that the manager writes batch 4 before batch
	// 3 is done, and batches small enough for the frontier to fill both.
	if err := editConfig(r.Collection, setKey("wait", `wait = "1s"`)); err != nil {
		return c, err
	}
	if err := editConfig(r.Collection, setKey("batch_size", `batch_size = 10`)); err != nil {
		return c, err
	}
	const first, second = 3, 4
	if res, err := r.Run(ctx, "manager", "run", "--collection", r.Collection); err != nil || res.Code != exitOK {
		c.Problem = fmt.Sprintf("manager run for batch %d: %v %s", first, err, res)
		return c, err
	}
	col := &collection.Collection{Dir: r.Collection}
	logged := func(id int) int {
		data, err := os.ReadFile(filepath.Join(col.Batch(id).Dir, collection.HarvestPartialDir, fetchlog.LogFile))
		if err != nil {
			return 0
		}
		return max(bytes.Count(data, []byte{'\n'})-2, 0) // the header
	}
	p, err := r.Start(ctx, "harvester", "run", "--collection", r.Collection, "--follow")
	if err != nil {
		return c, err
	}
	stop := func(problem string) (EnvCase, error) {
		p.Kill()
		p.Wait()
		c.Problem = problem
		return c, nil
	}
	until := func(ok func() bool) bool {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if ok() {
				return true
			}
		}
		return false
	}
	if !until(func() bool { return logged(first) > 0 }) {
		return stop("the first batch never started")
	}
	res, err := r.Run(ctx, "manager", "run", "--collection", r.Collection)
	if err != nil {
		p.Kill()
		p.Wait()
		return c, err
	}
	if res.Code != exitOK || !col.Batch(second).Done(collection.StageManaged) {
		return stop(fmt.Sprintf("the manager wrote no batch %d beside the harvest: %s", second, res))
	}
	if !until(func() bool { return logged(second) > 0 || col.Batch(first).Done(collection.StageHarvested) }) {
		return stop("the second batch never started")
	}
	p.Kill()
	if res, err = p.Wait(); err != nil {
		return c, err
	}
	if !res.Killed || col.Batch(first).Done(collection.StageHarvested) || col.Batch(second).Done(collection.StageHarvested) {
		c.Problem = fmt.Sprintf("not two batches in flight at the kill (killed %v, batch %d harvested %v, batch %d %v)",
			res.Killed, first, col.Batch(first).Done(collection.StageHarvested), second, col.Batch(second).Done(collection.StageHarvested))
		return c, nil
	}
	in1, in2 := logged(first), logged(second)
	res, err = r.Run(ctx, "harvester", "run", "--collection", r.Collection, "--follow")
	if err != nil {
		return c, err
	}
	if res.Code != exitOK || !col.Batch(first).Done(collection.StageHarvested) || !col.Batch(second).Done(collection.StageHarvested) {
		c.Problem = fmt.Sprintf("rerun with --follow: %s\n%s", res, res.Stdout)
		return c, nil
	}
	for _, stage := range []string{"gatherer", "gatherer", "seeder", "seeder"} {
		if res, err := r.Stage(ctx, stage); err != nil || res.Code != exitOK {
			c.Problem = fmt.Sprintf("after the rerun, %s: %v %s", stage, err, res)
			return c, err
		}
	}
	if p := afterFault(ctx, r, ""); p != "" {
		c.Problem = p
		return c, nil
	}
	c.Note = fmt.Sprintf("killed with batch %d (%d lines logged) and batch %d (%d) in flight; the rerun with --follow published both, gathered, seeded, seeder check passes", first, in1, second, in2)
	return c, nil
}
