package faulttest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// KillOptions configure a crawl with kills.
type KillOptions struct {
	// Seed drives every random choice (which run to kill, when); the same
	// seed gives the same schedule of kill moments (where each lands
	// depends on the machine's speed).
	Seed uint64
	// Cycles is the number of crawl cycles (manager, harvester,
	// gatherer, seeder) to run at least.
	Cycles int
	// MinKills is the number of kills that must land, and MinPerStage
	// (default 1) the number per stage; the crawl runs more cycles (up to
	// 3*Cycles) until it has them.
	MinKills, MinPerStage int
	// OverlapCycles, if not zero, adds overlapped cycles after the
	// serial ones (the schedule of scripts/crawl.sh: the harvester of
	// batch N+1 beside the gatherer and the seeder of batch N, the
	// manager beside the harvester), with kills of any stage while others
	// run; the serial phase then runs exactly Cycles cycles, and the
	// overlapped one runs more (up to 3*OverlapCycles) until the kills
	// are enough.
	OverlapCycles int
	// MinOverlapKills (default 1 when OverlapCycles is set) is the number
	// of kills that must land in each of the two overlaps that matter: a
	// harvester killed while a seeder runs, and a seeder killed while a
	// harvester runs.
	MinOverlapKills int
	// KillChance is the probability that a stage run is killed (default
	// 0.9); a killed run is rerun, and the rerun itself is killed again
	// with probability KillChance/3.
	KillChance float64
	// Log, if not nil, receives one line per kill and per cycle.
	Log io.Writer
}

// Kill is one SIGKILL that landed.
type Kill struct {
	// Cycle is the crawl cycle (0 for the final drain).
	Cycle int
	// Stage is the binary killed.
	Stage string
	// After is how long after its start it was killed.
	After time.Duration
	// Rerun is true when the killed run was itself the rerun of a killed
	// run.
	Rerun bool
	// Dead is when the killed process had been reaped.
	Dead time.Time
	// Batch is the batch the stage ran on (overlapped cycles only), and
	// Beside the other stages running when the kill was sent ("seeder
	// 000004").
	Batch  string
	Beside []string
}

// KillReport says what a crawl with kills did.
type KillReport struct {
	// Seed is the seed used.
	Seed uint64
	// Cycles is the number of cycles run (a cycle whose manager found the
	// frontier empty is not counted).
	Cycles int
	// OverlapCycles is the number of overlapped cycles run (batches
	// written by the manager in that phase).
	OverlapCycles int
	// Kills are the kills that landed, in order.
	Kills []Kill
	// Missed counts kill attempts that came after the run had ended.
	Missed int
	// Runs counts the stage runs, killed or not.
	Runs int
	// Follows counts the gatherer runs that followed a harvest in flight
	// (gatherer run --follow), killed or not.
	Follows int
	// FrontierEmpty is true when the crawl stopped because the manager
	// had nothing to schedule.
	FrontierEmpty bool
	// Notes are oddities seen on the way that are not failures.
	Notes []string
}

// Deaths returns when each killed run of stage had been reaped, in order.
func (r KillReport) Deaths(stage string) []time.Time {
	var out []time.Time
	for _, k := range r.Kills {
		if k.Stage == stage {
			out = append(out, k.Dead)
		}
	}
	return out
}

// OverlapKills counts the kills that landed while another stage ran,
// as "harvester beside seeder" (a harvester killed while a seeder ran).
func (r KillReport) OverlapKills() map[string]int {
	m := map[string]int{}
	for _, k := range r.Kills {
		for _, b := range k.Beside {
			m[k.Stage+" beside "+strings.Fields(b)[0]]++
		}
	}
	return m
}

// KillsByStage counts the kills of each stage.
func (r KillReport) KillsByStage() map[string]int {
	m := map[string]int{}
	for _, k := range r.Kills {
		m[k.Stage]++
	}
	return m
}

// CrawlWithKills runs crawl cycles on the runner's collection, killing
// stages with SIGKILL at random moments and rerunning them, like an
// operator whose machine keeps crashing: each run of a stage is killed
// with probability KillChance at a moment drawn uniformly between its
// start and 1.2 times the last complete run of that stage; the killed run
// is rerun at once (and sometimes killed again); every stage must finish
// with exit 0 (or 3, nothing to do) in the end. After the cycles it drains
// the pipeline without kills, so that every batch is seeded.
func CrawlWithKills(ctx context.Context, r *Runner, opts KillOptions) (KillReport, error) {
	if opts.KillChance == 0 {
		opts.KillChance = 0.9
	}
	if opts.MinPerStage == 0 {
		opts.MinPerStage = 1
	}
	if opts.OverlapCycles > 0 && opts.MinOverlapKills == 0 {
		opts.MinOverlapKills = 1
	}
	enough := func(rep KillReport) bool {
		by := rep.KillsByStage()
		for _, s := range Stages() {
			if by[s] < opts.MinPerStage {
				return false
			}
		}
		if opts.OverlapCycles > 0 {
			ov := rep.OverlapKills()
			if ov["harvester beside seeder"] < opts.MinOverlapKills || ov["seeder beside harvester"] < opts.MinOverlapKills {
				return false
			}
		}
		return len(rep.Kills) >= opts.MinKills
	}
	rep := KillReport{Seed: opts.Seed}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	est := map[string]time.Duration{}
	last := map[string]Result{} // the last run of each stage that was not killed
	for _, s := range Stages() {
		est[s] = 100 * time.Millisecond
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}

	// stage runs one stage until it exits without being killed, killing
	// it at random first. It returns the exit code of the final run.
	stage := func(cycle int, name string, chance float64) (int, error) {
		rerun := false
		for attempt := 0; ; attempt++ {
			var (
				res Result
				err error
			)
			if attempt < 4 && rng.Float64() < chance {
				delay := time.Duration(rng.Int64N(int64(est[name])*12/10 + 1))
				res, err = r.StageKilled(ctx, name, delay)
				rep.Runs++
				if err != nil {
					return 0, err
				}
				if res.Killed {
					rep.Kills = append(rep.Kills, Kill{Cycle: cycle, Stage: name, After: delay, Rerun: rerun, Dead: res.Ended})
					what := ""
					if rerun {
						what = " (a rerun)"
					}
					logf("cycle %d: killed %s after %v%s", cycle, name, delay.Round(time.Millisecond), what)
					rerun = true
					chance = opts.KillChance / 3
					continue
				}
				rep.Missed++
			} else {
				res, err = r.Stage(ctx, name)
				rep.Runs++
				if err != nil {
					return 0, err
				}
			}
			last[name] = res
			switch res.Code {
			case exitOK:
				est[name] = res.Elapsed
				return exitOK, nil
			case exitNothing:
				return exitNothing, nil
			}
			return res.Code, fmt.Errorf("cycle %d: %s", cycle, res)
		}
	}
	// drain runs harvester, gatherer and seeder until each has nothing
	// left to do.
	// It reports whether any stage had work.
	drain := func(cycle int, chance float64) (bool, error) {
		worked := false
		for _, name := range Stages()[1:] {
			// Only the first run of each stage, the one with work, is
			// a candidate for a kill.
			for c := chance; ; c = 0 {
				code, err := stage(cycle, name, c)
				if err != nil {
					return worked, err
				}
				if code == exitNothing {
					break
				}
				worked = true
			}
		}
		return worked, nil
	}

	if _, err := drain(0, 0); err != nil {
		return rep, err
	}
	maxCycles := 3 * opts.Cycles
	if opts.OverlapCycles > 0 {
		maxCycles = opts.Cycles // the overlapped phase runs on until enough
	}
	for cycle := 1; cycle <= maxCycles; cycle++ {
		if cycle > opts.Cycles && enough(rep) {
			break
		}
		code, err := stage(cycle, "manager", opts.KillChance)
		if err != nil {
			return rep, err
		}
		worked, err := drain(cycle, opts.KillChance)
		if err != nil {
			return rep, err
		}
		if code == exitNothing && worked {
			note := fmt.Sprintf("cycle %d: the manager had nothing to do while a batch waited in the pipeline: %s", cycle, last["manager"])
			rep.Notes = append(rep.Notes, note)
			logf("%s", note)
		}
		if code == exitNothing && !worked {
			// A manager rerun after a kill may complete the batch its
			// killed run wrote and then find nothing more to schedule:
			// only an empty pipeline behind it means the end.
			rep.FrontierEmpty = true
			logf("cycle %d: the frontier is empty", cycle)
			break
		}
		rep.Cycles = cycle
		logf("cycle %d done: %d kills so far", cycle, len(rep.Kills))
	}
	if opts.OverlapCycles > 0 && !rep.FrontierEmpty {
		if err := crawlOverlapped(ctx, r, opts, &rep, rng, est, logf, enough); err != nil {
			return rep, err
		}
	}
	if _, err := drain(0, 0); err != nil {
		return rep, err
	}
	if !enough(rep) {
		return rep, fmt.Errorf("only %d kills landed in %d+%d cycles (%v, overlapped %v; want %d, at least %d per stage, %d of a harvester beside a seeder and of a seeder beside a harvester): the crawl is too short for the kill schedule",
			len(rep.Kills), rep.Cycles, rep.OverlapCycles, rep.KillsByStage(), rep.OverlapKills(), opts.MinKills, opts.MinPerStage, opts.MinOverlapKills)
	}
	return rep, nil
}
