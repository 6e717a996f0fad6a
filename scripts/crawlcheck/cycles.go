package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
)

// cyclesCommand is `crawlcheck cycles`.
func cyclesCommand() *cli.Command {
	return &cli.Command{
		Name:  "cycles",
		Usage: "where a crawl's time went, batch by batch: harvest, gather, seed, and the harvester's idle time between batches",
		Description: `Reads the batch markers of --collection (docs/format/collection.md): when
each batch file was written (its modification time), when its harvest
started and ended (harvested.done), when its gathering started and how
long it took (gathered.done), when its seeding started and how long it
took (seeded.done). Prints one line per batch, times in seconds from
--start (default: the first batch written):

  written    the manager wrote the batch
  harvest    harvest start - end, and its length
  idle       the harvester's idle time before this harvest (since the
             previous harvest ended)
  gathered   gathering ended, in seconds after the harvest ended (with
             gatherer run --follow it started during the harvest)
  seeded     seeding ended, in seconds after the harvest ended
  next       the next batch written, in seconds after this one was seeded
             (negative: written beside, before this one was seeded)

then the totals: the harvester's busy and idle time and the medians of
the gaps. A stage that has not run on a batch is left blank.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "collection", Required: true, Usage: "collection directory"},
			&cli.TimestampFlag{Name: "start", Layout: time.RFC3339Nano, Usage: "time zero (RFC 3339; default: the first batch written)"},
		},
		Action: func(c *cli.Context) error {
			cs, err := readCycles(c.String("collection"))
			if err != nil {
				return err
			}
			var start time.Time
			if t := c.Timestamp("start"); t != nil {
				start = *t
			}
			printCycles(c.App.Writer, cs, start)
			return nil
		},
	}
}

// cycle is what the markers of one batch say.
type cycle struct {
	name                   string
	written                time.Time
	harvestStart, harvEnd  time.Time
	gatherStart, gatherEnd time.Time
	seedStart, seedEnd     time.Time
}

// readCycles reads the markers of every batch of the collection in dir.
func readCycles(dir string) ([]cycle, error) {
	col, err := collection.Open(dir)
	if err != nil {
		return nil, err
	}
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	var out []cycle
	for _, id := range ids {
		b := col.Batch(id)
		st, err := os.Stat(b.File())
		if err != nil {
			continue // being written
		}
		c := cycle{name: b.Name(), written: st.ModTime()}
		var h struct {
			Started, Finished time.Time
		}
		if b.Summary(collection.StageHarvested, &h) == nil {
			c.harvestStart, c.harvEnd = h.Started, h.Finished
		}
		var g struct {
			Started time.Time `json:"started"`
			Seconds float64   `json:"seconds"`
		}
		if b.Summary(collection.StageGathered, &g) == nil && !g.Started.IsZero() {
			c.gatherStart, c.gatherEnd = g.Started, g.Started.Add(time.Duration(g.Seconds*float64(time.Second)))
		}
		var s struct {
			Started time.Time `json:"started"`
			Elapsed string    `json:"elapsed"`
		}
		if b.Summary(collection.StageSeeded, &s) == nil && !s.Started.IsZero() {
			if d, err := time.ParseDuration(s.Elapsed); err == nil {
				c.seedStart, c.seedEnd = s.Started, s.Started.Add(d)
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no batch written", filepath.Clean(dir))
	}
	return out, nil
}

// printCycles prints the table of crawlcheck cycles.
func printCycles(w io.Writer, cs []cycle, start time.Time) {
	if start.IsZero() {
		start = cs[0].written
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return fmt.Sprintf("%.2f", t.Sub(start).Seconds())
	}
	gap := func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return ""
		}
		return fmt.Sprintf("%+.2f", to.Sub(from).Seconds())
	}
	fmt.Fprintf(w, "%-7s %8s %17s %7s %6s %9s %8s %7s\n", "batch", "written", "harvest", "length", "idle", "gathered", "seeded", "next")
	var busy, idle time.Duration
	var gathers, seeds, nexts []float64
	var prevEnd time.Time
	for i, c := range cs {
		harvest, length, idleS := "", "", ""
		if !c.harvestStart.IsZero() {
			harvest = fmt.Sprintf("%s-%s", at(c.harvestStart), at(c.harvEnd))
			length = fmt.Sprintf("%.2f", c.harvEnd.Sub(c.harvestStart).Seconds())
			busy += c.harvEnd.Sub(c.harvestStart)
			if !prevEnd.IsZero() {
				d := max(0, c.harvestStart.Sub(prevEnd))
				idle += d
				idleS = fmt.Sprintf("%.2f", d.Seconds())
			}
			prevEnd = c.harvEnd
		}
		next := ""
		if i+1 < len(cs) && !c.seedEnd.IsZero() {
			next = gap(c.seedEnd, cs[i+1].written)
			nexts = append(nexts, cs[i+1].written.Sub(c.seedEnd).Seconds())
		}
		if !c.harvEnd.IsZero() && !c.gatherEnd.IsZero() {
			gathers = append(gathers, c.gatherEnd.Sub(c.harvEnd).Seconds())
		}
		if !c.harvEnd.IsZero() && !c.seedEnd.IsZero() {
			seeds = append(seeds, c.seedEnd.Sub(c.harvEnd).Seconds())
		}
		fmt.Fprintf(w, "%-7s %8s %17s %7s %6s %9s %8s %7s\n", c.name, at(c.written), harvest, length, idleS,
			gap(c.harvEnd, c.gatherEnd), gap(c.harvEnd, c.seedEnd), next)
	}
	fmt.Fprintf(w, "harvester busy %.2f s, idle %.2f s between harvests; medians after a harvest ended: gathered %s s, seeded %s s; next batch after seeded %s s\n",
		busy.Seconds(), idle.Seconds(), medianOf(gathers), medianOf(seeds), medianOf(nexts))
}

// medianOf formats the median of xs ("-" if none).
func medianOf(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%+.2f", s[len(s)/2])
}
