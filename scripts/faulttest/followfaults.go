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
// killed (SIGKILL) with two batches in flight — batch 2, and batch 3,
// which the manager wrote while batch 2 was being harvested and the
// harvester took beside it — and run again with --follow: both batches
// are published (the harvester verifies one fetch log line per URL
// before it publishes), gathered and seeded, and `seeder check` passes
// (docs/harvester.md, "Following the batches").
func followKilled(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "follow-killed"}
	r, err := fresh(c.Name, st.managed)
	if err != nil {
		return c, err
	}
	// A slower harvest, so that the manager writes batch 3 before batch
	// 2 is done.
	if err := editConfig(r.Collection, setKey("wait", `wait = "1s"`)); err != nil {
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
	if !until(func() bool { return logged(2) > 0 }) {
		return stop("batch 2 never started")
	}
	res, err := r.Run(ctx, "manager", "run", "--collection", r.Collection)
	if err != nil {
		p.Kill()
		p.Wait()
		return c, err
	}
	if res.Code != exitOK || !col.Batch(3).Done(collection.StageManaged) {
		return stop(fmt.Sprintf("the manager wrote no batch 3 beside the harvest: %s", res))
	}
	if !until(func() bool { return logged(3) > 0 || col.Batch(2).Done(collection.StageHarvested) }) {
		return stop("batch 3 never started")
	}
	p.Kill()
	if res, err = p.Wait(); err != nil {
		return c, err
	}
	if !res.Killed || col.Batch(2).Done(collection.StageHarvested) || col.Batch(3).Done(collection.StageHarvested) {
		c.Problem = fmt.Sprintf("not two batches in flight at the kill (killed %v, batch 2 harvested %v, batch 3 %v)",
			res.Killed, col.Batch(2).Done(collection.StageHarvested), col.Batch(3).Done(collection.StageHarvested))
		return c, nil
	}
	in2, in3 := logged(2), logged(3)
	res, err = r.Run(ctx, "harvester", "run", "--collection", r.Collection, "--follow")
	if err != nil {
		return c, err
	}
	if res.Code != exitOK || !col.Batch(2).Done(collection.StageHarvested) || !col.Batch(3).Done(collection.StageHarvested) {
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
	c.Note = fmt.Sprintf("killed with batch 2 (%d lines logged) and batch 3 (%d) in flight; the rerun with --follow published both, gathered, seeded, seeder check passes", in2, in3)
	return c, nil
}
