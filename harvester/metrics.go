package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
)

// metricsProgress keeps a harvester run's live metrics up to date from
// its progress snapshots (every harvester.Options.ProgressEvery): what
// metrics.listen serves during the run and STAGE.prom holds after it.
type metricsProgress struct{ m *command.StageMetrics }

// Start implements harvester.Progress.
func (p metricsProgress) Start(total int) {
	p.m.Set("harvest_run_urls", "URLs the harvester's current (or last) run has to log.", float64(total))
	p.Update(harvester.Stats{Total: total})
}

// Update implements harvester.Progress.
func (p metricsProgress) Update(st harvester.Stats) {
	m := p.m
	m.SetCount("harvest_run_urls_logged_total", "URLs the harvester's current (or last) run logged.", float64(st.Logged))
	m.SetCount("harvest_run_pages_total", "Pages the harvester's current (or last) run fetched (responses stored without error).", float64(st.Pages))
	m.SetCount("harvest_run_bytes_total", "Body bytes of the pages the harvester's current (or last) run fetched.", float64(st.Bytes))
	m.SetCount("harvest_run_errors_total", "URLs that failed in the harvester's current (or last) run (robots.txt exclusions not counted).", float64(st.Errors))
	m.SetCount("harvest_run_requests_total", "Requests the harvester's current (or last) run made, robots.txt included.", float64(st.Requests))
	m.SetCount("harvest_run_robots_excluded_total", "URLs the harvester's current (or last) run did not request because of robots.txt.", float64(st.RobotsExcluded))
	hosts := m.Gauge("harvest_hosts", "Hosts of the harvest by state: active (holding a connection), waiting (for their turn, a connection or DNS: politeness), done.", "state")
	hosts.WithLabelValues("active").Set(float64(st.HostsActive))
	hosts.WithLabelValues("waiting").Set(float64(st.HostsWaiting))
	hosts.WithLabelValues("done").Set(float64(st.HostsDone))
	m.Set("harvest_hosts_given_up", "Hosts given up (failures, Retry-After, streaming): politeness. During a run, this run's; after it, the batch's (servers.jsonl).", float64(st.HostsGivenUp))
	m.Set("harvest_run_seconds", "Seconds the harvester's current (or last) run has taken.", st.Elapsed.Seconds())
}

// Done implements harvester.Progress.
func (p metricsProgress) Done(st harvester.Stats) { p.Update(st) }

// progressTee passes a run's progress to several displays.
type progressTee []harvester.Progress

// Start implements harvester.Progress.
func (t progressTee) Start(total int) {
	for _, p := range t {
		p.Start(total)
	}
}

// Update implements harvester.Progress.
func (t progressTee) Update(st harvester.Stats) {
	for _, p := range t {
		p.Update(st)
	}
}

// Done implements harvester.Progress.
func (t progressTee) Done(st harvester.Stats) {
	for _, p := range t {
		p.Done(st)
	}
}

// recordMetrics fills the batch's figures from the harvest summary and
// the hosts given up from its servers.jsonl (docs/operations.md,
// "Metrics").
func recordMetrics(m *command.StageMetrics, s *harvester.Summary, harvestDir string) {
	if m == nil || s == nil {
		return
	}
	m.SetBatch(s.Batch, s.URLs, s.ElapsedSeconds, s.Bytes)
	m.Set("harvest_pages", "Pages of the last harvested batch fetched without error (every run of the batch).", float64(s.Fetched))
	m.Set("harvest_robots_excluded", "URLs of the last harvested batch excluded by robots.txt.", float64(s.RobotsExcluded))
	m.Set("harvest_deferred", "URLs of the last harvested batch deferred to the next batch (deadline, tail).", float64(s.Deferred))
	failed := 0
	for _, n := range s.Errors {
		failed += n
	}
	m.Set("harvest_failed", "URLs of the last harvested batch that failed, all kinds (robots.txt exclusions and deferred URLs not counted).", float64(failed))
	m.SetBy("harvest_errors", "URLs of the last harvested batch that failed, by kind (docs/format/harvest.md, Error texts).", "kind", s.Errors)
	m.SetBy("harvest_statuses", "Responses of the last harvested batch by status class.", "class", s.Statuses)
	m.Set("harvest_pages_per_second", "Pages per second of the harvester's last run.", s.PagesPerSecond)
	srvs, err := fetchlog.ReadServers(filepath.Join(harvestDir, fetchlog.ServersFile))
	if err != nil {
		return
	}
	gaveUp := 0
	for _, sv := range srvs {
		if sv.GaveUp != "" {
			gaveUp++
		}
	}
	m.Set("harvest_hosts_given_up", "Hosts given up (failures, Retry-After, streaming): politeness. During a run, this run's; after it, the batch's (servers.jsonl).", float64(gaveUp))
	m.Set("harvest_hosts_total", "Host names of the last harvested batch.", float64(s.Hosts))
}

// withProgress adds a display to a run's progress (nil: none yet).
func withProgress(p harvester.Progress, more ...harvester.Progress) harvester.Progress {
	if p == nil && len(more) == 1 {
		return more[0]
	}
	if p != nil {
		more = append(progressTee{p}, more...)
	}
	return progressTee(more)
}

// serveMetrics serves the run's metrics live on metrics.listen until
// the returned stop is called.
func serveMetrics(ctx context.Context, m *command.StageMetrics, cfg config.Config, log *slog.Logger) (func(), error) {
	addr, err := cfg.Metrics.ListenAddr()
	if err != nil {
		return nil, command.Usage("metrics.listen: %v", err)
	}
	got, stop, err := m.Serve(ctx, addr, log)
	if err != nil {
		return nil, err
	}
	log.Info("serving metrics", "url", "http://"+got+"/metrics")
	return stop, nil
}

// startMetrics starts a harvester run's metrics when metrics.dir or
// metrics.listen is set: the live values follow the run's progress, and
// metrics.listen serves them until stop is called.
func startMetrics(ctx context.Context, o *runOptions) (*command.StageMetrics, func(), error) {
	root := o.BatchDir // where the metrics and the disk use are measured
	if root == "" {
		root = o.Collection
	}
	m := command.NewStageMetrics("harvester", root, o.Config, o.Config.Metrics.Listen != "")
	if m == nil {
		return nil, func() {}, nil
	}
	o.Progress = withProgress(o.Progress, metricsProgress{m})
	if o.Config.Metrics.Listen == "" {
		return m, func() {}, nil
	}
	stop, err := serveMetrics(ctx, m, o.Config, o.Logger)
	if err != nil {
		return nil, nil, err
	}
	return m, stop, nil
}
