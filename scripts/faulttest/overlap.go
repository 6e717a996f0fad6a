package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Overlapped cycles (docs/architecture.md, "Overlapping cycles") follow
// the rules of scripts/crawl.sh: one run of each stage at a time, each on
// the oldest batch ready for it; never the manager beside the seeder; the
// manager writes a batch only when at most one batch is unfinished and
// none waits for the harvester; when the manager and the seeder could
// both start, the manager first if the harvester is idle; the gatherer,
// when no harvested batch waits for it, follows the harvest in flight
// (gatherer run --follow). Unlike crawl.sh, which stops the crawl when a
// stage is killed, a killed harvester is run again at once here, and the
// gatherer following its batch goes on following it: the rerun repairs
// the partial fetch log, and the follower must notice and gather the
// published harvest again.

// ojob is a running stage of the overlapped crawl.
type ojob struct {
	stage, batch string
	proc         *Proc
	started      time.Time
	killAt       time.Time // zero: no kill planned
	killSent     bool
	beside       []string // the other running stages when the kill was sent
	rerun        bool     // this run reruns a killed one
	follow       bool     // a gatherer following the harvest in flight
}

// oevent is the end of a job.
type oevent struct {
	job *ojob
	res Result
	err error
}

// overlapped is the state of an overlapped crawl with kills.
type overlapped struct {
	ctx      context.Context
	r        *Runner
	col      *collection.Collection
	opts     KillOptions
	rep      *KillReport
	rng      *rand.Rand
	est      map[string]time.Duration
	logf     func(format string, args ...any)
	enough   func(KillReport) bool
	running  map[string]*ojob
	events   chan oevent
	rerun    map[string]bool // the stage's last run was killed
	attempts map[string]int  // runs per stage and batch
	cycles   int             // batches written in this phase
	mgrDone  bool            // no more manager runs
	mgrWait  bool            // the manager found nothing with batches unfinished: wait for a seeder
}

// batchState is what the markers say.
type batchState struct {
	ready                   map[string]string // stage -> oldest batch ready for it
	unfinished, unharvested int
	next                    string // the manager's next batch
}

// scan reads the batch markers.
func (o *overlapped) scan() (batchState, error) {
	st := batchState{ready: map[string]string{}}
	ids, err := o.col.BatchIDs()
	if err != nil {
		return st, err
	}
	last := 0
	for _, id := range ids {
		last = id
		b := o.col.Batch(id)
		if !b.Done(collection.StageManaged) || b.Done(collection.StageSeeded) {
			continue
		}
		st.unfinished++
		stage := "seeder"
		switch {
		case !b.Done(collection.StageHarvested):
			st.unharvested++
			stage = "harvester"
		case !b.Done(collection.StageGathered):
			stage = "gatherer"
		}
		if st.ready[stage] == "" {
			st.ready[stage] = b.Name()
		}
	}
	st.next = collection.BatchName(last + 1)
	return st, nil
}

// cycle is the number of the cycle in progress, counting the serial ones.
func (o *overlapped) cycle() int { return o.rep.Cycles + o.cycles + 1 }

// killing tells whether kills are still planned: not in the final drain.
func (o *overlapped) killing() bool { return !o.mgrDone }

// launch starts stage on batch b, with a kill planned at random; follow
// runs the gatherer with --follow.
func (o *overlapped) launch(stage, b string, follow bool) error {
	args := []string{"run", "--collection", o.r.Collection}
	if stage != "manager" {
		n, _ := strconv.Atoi(b)
		args = append(args, "--batch", strconv.Itoa(n))
	}
	if follow {
		args = append(args, "--follow")
		o.rep.Follows++
	}
	p, err := o.r.Start(o.ctx, stage, args...)
	if err != nil {
		return err
	}
	j := &ojob{stage: stage, batch: b, proc: p, started: time.Now(), rerun: o.rerun[stage], follow: follow}
	o.attempts[stage+b]++
	chance := o.opts.KillChance
	if j.rerun {
		chance /= 3
	}
	if o.killing() && o.attempts[stage+b] <= 4 && o.rng.Float64() < chance {
		j.killAt = j.started.Add(time.Duration(o.rng.Int64N(int64(o.est[stage])*12/10 + 1)))
	}
	o.running[stage] = j
	go func() {
		res, err := p.Wait()
		o.events <- oevent{job: j, res: res, err: err}
	}()
	// The harvester of one batch and the seeder of another at once: most
	// times kill one of the two while the other runs, i.e. within the
	// seeder's usual time (sooner than a kill already planned): the one
	// whose kill beside the other has landed less often so far, else
	// either.
	h, s := o.running["harvester"], o.running["seeder"]
	if o.killing() && h != nil && s != nil && !h.killSent && !s.killSent && o.rng.Float64() < 0.7 {
		ov := o.rep.OverlapKills()
		victim := h
		switch hs, sh := ov["harvester beside seeder"], ov["seeder beside harvester"]; {
		case hs > sh:
			victim = s
		case hs == sh && o.rng.IntN(2) == 1:
			victim = s
		}
		at := time.Now().Add(time.Duration(o.rng.Int64N(int64(o.est["seeder"]) + 1)))
		if o.attempts[victim.stage+victim.batch] <= 4 && (victim.killAt.IsZero() || at.Before(victim.killAt)) {
			victim.killAt = at
		}
	}
	return nil
}

// schedule starts what the rules allow.
func (o *overlapped) schedule() error {
	st, err := o.scan()
	if err != nil {
		return err
	}
	run := func(s string) bool { return o.running[s] != nil }
	if b := st.ready["harvester"]; !run("harvester") && b != "" && !(run("manager") && o.running["manager"].batch == b) {
		if err := o.launch("harvester", b, false); err != nil {
			return err
		}
	}
	if !run("gatherer") {
		if b := st.ready["gatherer"]; b != "" {
			if err := o.launch("gatherer", b, false); err != nil {
				return err
			}
		} else if h := o.running["harvester"]; h != nil && !o.batch(h.batch).Done(collection.StageGathered) {
			if err := o.launch("gatherer", h.batch, true); err != nil {
				return err
			}
		}
	}
	waiting := st.unharvested
	if run("harvester") {
		waiting--
	}
	manage := !run("manager") && !run("seeder") && !o.mgrDone && !o.mgrWait && st.unfinished <= 1 && waiting == 0
	seed := !run("seeder") && !run("manager") && st.ready["seeder"] != ""
	switch {
	case manage && (!seed || !run("harvester")):
		return o.launch("manager", st.next, false)
	case seed:
		return o.launch("seeder", st.ready["seeder"], false)
	}
	return nil
}

// batch is the collection's batch of name b.
func (o *overlapped) batch(b string) *collection.Batch {
	n, _ := strconv.Atoi(b)
	return o.col.Batch(n)
}

// besides lists the running stages other than j.
func (o *overlapped) besides(j *ojob) []string {
	var out []string
	for _, s := range Stages() {
		if k := o.running[s]; k != nil && k != j {
			out = append(out, s+" "+k.batch)
		}
	}
	return out
}

// ended handles the end of a job.
func (o *overlapped) ended(ev oevent) error {
	j, res := ev.job, ev.res
	delete(o.running, j.stage)
	o.rep.Runs++
	if ev.err != nil {
		return ev.err
	}
	if res.Killed {
		o.rep.Kills = append(o.rep.Kills, Kill{Cycle: o.cycle(), Stage: j.stage, After: j.killAt.Sub(j.started), Rerun: j.rerun,
			Dead: res.Ended, Batch: j.batch, Beside: j.beside})
		what := ""
		if j.rerun {
			what = " (a rerun)"
		}
		o.logf("cycle %d (overlapped): killed %s on batch %s after %v%s beside [%s]", o.cycle(), j.stage, j.batch,
			j.killAt.Sub(j.started).Round(time.Millisecond), what, strings.Join(j.beside, ", "))
		o.rerun[j.stage] = true
		return nil
	}
	if j.killSent {
		o.rep.Missed++
	}
	o.rerun[j.stage] = false
	switch res.Code {
	case exitOK:
		o.est[j.stage] = res.Elapsed
		switch j.stage {
		case "manager":
			o.cycles++
			o.logf("cycle %d (overlapped): batch %s written; %d kills so far", o.cycle()-1, j.batch, len(o.rep.Kills))
			max := 3 * o.opts.OverlapCycles
			if o.cycles >= max || (o.cycles >= o.opts.OverlapCycles && o.enough(*o.rep)) {
				o.mgrDone = true
			}
		case "seeder":
			o.mgrWait = false
		}
		return nil
	case exitNothing:
		if j.stage != "manager" {
			return fmt.Errorf("cycle %d: %s had nothing to do on batch %s, which the markers call ready: %s", o.cycle(), j.stage, j.batch, res)
		}
		st, err := o.scan()
		if err != nil {
			return err
		}
		if st.unfinished > 0 {
			o.mgrWait = true
			return nil
		}
		o.rep.FrontierEmpty = true
		o.mgrDone = true
		o.logf("cycle %d (overlapped): the frontier is empty", o.cycle())
		return nil
	}
	return fmt.Errorf("cycle %d (overlapped): %s", o.cycle(), res)
}

// crawlOverlapped runs opts.OverlapCycles overlapped cycles (more, up to
// three times as many, until enough kills have landed), killing stages
// while others run, and then lets every batch finish without kills.
func crawlOverlapped(ctx context.Context, r *Runner, opts KillOptions, rep *KillReport, rng *rand.Rand,
	est map[string]time.Duration, logf func(string, ...any), enough func(KillReport) bool) error {
	col, err := collection.Open(r.Collection)
	if err != nil {
		return err
	}
	o := &overlapped{ctx: ctx, r: r, col: col, opts: opts, rep: rep, rng: rng, est: est, logf: logf, enough: enough,
		running: map[string]*ojob{}, events: make(chan oevent, 4), rerun: map[string]bool{}, attempts: map[string]int{}}
	defer func() { rep.OverlapCycles = o.cycles }()
	for {
		if err := o.schedule(); err != nil {
			o.stopAll()
			return err
		}
		if len(o.running) == 0 {
			return nil
		}
		var victim *ojob
		for _, j := range o.running {
			if !j.killAt.IsZero() && !j.killSent && (victim == nil || j.killAt.Before(victim.killAt)) {
				victim = j
			}
		}
		var timer <-chan time.Time
		if victim != nil {
			timer = time.After(time.Until(victim.killAt))
		}
		select {
		case ev := <-o.events:
			if err := o.ended(ev); err != nil {
				o.stopAll()
				return err
			}
		case <-timer:
			victim.beside = o.besides(victim)
			victim.killSent = true
			victim.proc.Kill()
		case <-ctx.Done():
			o.stopAll()
			return ctx.Err()
		}
	}
}

// stopAll kills the running stages and waits for them.
func (o *overlapped) stopAll() {
	for _, j := range o.running {
		j.proc.Kill()
	}
	for len(o.running) > 0 {
		ev := <-o.events
		delete(o.running, ev.job.stage)
	}
}
