// Package metrics holds the Prometheus metrics of one stage run and
// publishes them: as a STAGE.prom file in the text format of
// node_exporter's textfile collector, written atomically at the end of
// the run, and live over HTTP while a long run goes on. The metric names
// and their meaning are in docs/operations.md ("Metrics").
package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Namespace starts every metric name.
const Namespace = "wire"

// LastSuccess is the name of the metric that holds the time of the last
// successful run of a stage; a failed run carries it over from the
// previous file.
const LastSuccess = Namespace + "_stage_last_success_timestamp_seconds"

// Run is the metrics of one stage run. Its methods are safe for
// concurrent use (the live HTTP endpoint reads while the run writes).
type Run struct {
	stage string
	start time.Time
	reg   *prometheus.Registry
	wrap  prometheus.Registerer // reg with the stage and collection labels

	mu       sync.Mutex
	gauges   map[string]*prometheus.GaugeVec
	counters map[string]*prometheus.CounterVec
}

// New starts the metrics of a run of stage ("manager", "harvester",
// "gatherer", "seeder") on the collection dir (a label of every metric,
// so that the files of several collections can be told apart).
func New(stage, dir string) *Run {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	reg := prometheus.NewRegistry()
	r := &Run{
		stage:    stage,
		start:    time.Now(),
		reg:      reg,
		wrap:     prometheus.WrapRegistererWith(prometheus.Labels{"stage": stage, "collection": dir}, reg),
		gauges:   map[string]*prometheus.GaugeVec{},
		counters: map[string]*prometheus.CounterVec{},
	}
	r.Set("stage_start_timestamp_seconds", "When the stage's last run started (Unix time).", float64(r.start.UnixNano())/1e9)
	return r
}

// Stage is the stage the run belongs to.
func (r *Run) Stage() string { return r.stage }

// Gauge returns the gauge NAME (wire_ is prefixed) with the given label
// names, registering it on first use.
func (r *Run) Gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.gauges[name]
	if !ok {
		g = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
		r.wrap.MustRegister(g)
		r.gauges[name] = g
	}
	return g
}

// Counter returns the counter NAME (wire_ is prefixed; end it in
// _total) with the given label names, registering it on first use.
func (r *Run) Counter(name, help string, labels ...string) *prometheus.CounterVec {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.counters[name]
	if !ok {
		c = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
		r.wrap.MustRegister(c)
		r.counters[name] = c
	}
	return c
}

// Set sets the gauge NAME without labels. A nil Run does nothing, so
// SetBatch sets the gauges every stage writes of the batch its run worked
// on: its id, its URLs (records), the seconds the run spent on it
// (negative: unknown, left out) and its bytes (negative: left out).
func (r *Run) SetBatch(id, urls int, seconds float64, bytes int64) {
	r.Set("stage_batch", "Batch the stage's last run worked on.", float64(id))
	r.Set("batch_urls", "URLs (records) of the batch the stage's last run worked on.", float64(urls))
	if seconds >= 0 {
		r.Set("batch_duration_seconds", "Seconds the stage's last run spent on its batch.", seconds)
	}
	if bytes >= 0 {
		r.Set("batch_bytes", "Bytes of the batch the stage's last run worked on: the harvester's page bodies, the gatherer's bodies read, the manager's batch file.", float64(bytes))
	}
}

// that a stage without metrics needs no checks.
func (r *Run) Set(name, help string, v float64) {
	if r != nil {
		r.Gauge(name, help).WithLabelValues().Set(v)
	}
}

// SetCount sets the counter NAME without labels to v (a counter of the
// run, filled from a snapshot: it only grows while the run goes on).
func (r *Run) SetCount(name, help string, v float64) {
	if r == nil {
		return
	}
	c := r.Counter(name, help).WithLabelValues()
	var m dto.Metric
	if err := c.Write(&m); err == nil {
		if d := v - m.GetCounter().GetValue(); d > 0 {
			c.Add(d)
		}
	}
}

// SetBy sets the gauge NAME with one label, label, to every value of m.
func (r *Run) SetBy(name, help, label string, m map[string]int) {
	if r == nil {
		return
	}
	g := r.Gauge(name, help, label)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g.WithLabelValues(k).Set(float64(m[k]))
	}
}

// Disk records the room of the collection: the bytes its files take,
// the free space and size of its file system and the free space
// collection.min_free keeps (keep, nil for none).
func (r *Run) Disk(dir string, keep collection.Keeper) error {
	if r == nil {
		return nil
	}
	use, err := collection.DiskUse(dir)
	if err != nil {
		return err
	}
	sp, err := collection.StatSpace(dir)
	if err != nil {
		return err
	}
	r.Set("collection_disk_bytes", "Bytes the collection's files take on disk.", float64(use))
	r.Set("filesystem_free_bytes", "Bytes free (for unprivileged writers) on the collection's file system.", float64(sp.Free))
	r.Set("filesystem_size_bytes", "Size in bytes of the collection's file system.", float64(sp.Size))
	var k int64
	if keep != nil {
		k = keep.Of(sp.Size)
	}
	r.Set("collection_min_free_bytes", "Free space collection.min_free keeps on the file system (0: no limit).", float64(k))
	return nil
}

// usage records the run's wall and CPU time and its peak memory.
func (r *Run) usage() {
	r.Set("stage_wall_seconds", "Wall-clock seconds of the stage's last run.", time.Since(r.start).Seconds())
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	cpu := r.Gauge("stage_cpu_seconds", "CPU seconds of the stage's last run, by mode (user, system).", "mode")
	cpu.WithLabelValues("user").Set(tv(ru.Utime))
	cpu.WithLabelValues("system").Set(tv(ru.Stime))
	r.Set("stage_peak_memory_bytes", "Peak resident memory of the stage's last run (getrusage maxrss).", float64(ru.Maxrss)*1024)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// FileName is the name of the metrics file of stage in the metrics
// directory.
func FileName(stage string) string { return stage + ".prom" }

// Finish records the end of the run — its wall and CPU time, peak
// memory, exit code, end time and, if ok, the time of this last
// success (else the previous file's is carried over) — and writes
// dir/STAGE.prom atomically (collection.WriteFileAtomic).
func (r *Run) Finish(dir string, ok bool, exitCode int) error {
	if r == nil {
		return nil
	}
	r.usage()
	now := float64(time.Now().UnixNano()) / 1e9
	r.Set("stage_exit_code", "Exit code of the stage's last run (docs/operations.md, Exit codes).", float64(exitCode))
	r.Set("stage_last_run_timestamp_seconds", "When the stage's last run ended (Unix time).", now)
	path := filepath.Join(dir, FileName(r.stage))
	last := 0.0
	if ok {
		last = now
	} else if prev, err := ReadFile(path); err == nil {
		last = Value(prev, LastSuccess)
	}
	if last > 0 {
		r.Set("stage_last_success_timestamp_seconds", "When the stage last ended successfully (Unix time).", last)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metrics directory: %w", err)
	}
	if err := collection.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write metrics %s: %w", path, err)
	}
	return nil
}

// Write writes the run's metrics in Prometheus' text format.
func (r *Run) Write(w *bytes.Buffer) error {
	mfs, err := r.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("encode metrics: %w", err)
		}
	}
	return nil
}

// Serve serves the run's metrics live at http://ADDR/metrics until ctx
// ends or stop is called; it returns the address it listens on.
func (r *Run) Serve(ctx context.Context, addr string, log *slog.Logger) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.Close()
			<-done
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	return ln.Addr().String(), stop, nil
}

// ReadFile parses a metrics file in the text format.
func ReadFile(path string) (map[string]*dto.MetricFamily, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		return nil, fmt.Errorf("parse metrics %s: %w", path, err)
	}
	return mfs, nil
}

// Value is the value of the first sample of the family name whose labels
// include the given pairs (name, value, name, value ...), or 0.
func Value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf := mfs[name]
	if mf == nil {
		return 0
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		}
	}
	return 0
}
