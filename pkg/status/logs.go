package status

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CronRun is one run of scripts/cron.sh as its log tells it.
type CronRun struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Ended is zero while the run goes on, or if it was killed.
	Ended time.Time `json:"ended,omitzero"`
	// Result is the text of its "end:" line: "ok …", "failed …",
	// "deadline reached …"; empty when it has not ended.
	Result string `json:"result,omitempty"`
	// Running tells whether the run still holds locks/cron.lock.
	Running bool `json:"running"`
}

// LogLine is one line of a log file.
type LogLine struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// cronLine matches the lines cron.sh writes itself (docs/operations.md):
// "TIME cron[PID]: TEXT".
var cronLine = regexp.MustCompile(`^(\S+) cron\[(\d+)\]: (.*)$`)

// isError tells whether a log line reports an error: cron.sh's FAILED
// NETWORK DOWN and DISK FULL lines and error-level lines of the stages' logs (an
// INTERRUPTED run is not an error: the next run resumes it).
func isError(text string) bool {
	return strings.Contains(text, "]: FAILED") || strings.Contains(text, "]: NETWORK DOWN") || strings.Contains(text, "]: DISK FULL") || strings.Contains(text, "level=ERROR")
}

// scanLogs reads logs/cron.log for the last cron run and the last error
// lines; when it has none, the other *.log files of logs/ (stages run
// by hand with their output sent there) are searched for errors.
func scanLogs(dir string, keep int) (*CronRun, []LogLine) {
	var run *CronRun
	errs := []LogLine{}
	add := func(file string, n int, text string) {
		errs = append(errs, LogLine{File: file, Line: n, Text: text})
		if len(errs) > keep {
			errs = errs[1:]
		}
	}
	cron := filepath.Join(dir, CronLogFile)
	eachLine(cron, func(n int, text string) {
		if m := cronLine.FindStringSubmatch(text); m != nil {
			t, _ := time.Parse(time.RFC3339, m[1])
			pid, _ := strconv.Atoi(m[2])
			switch {
			case strings.HasPrefix(m[3], "start:"):
				run = &CronRun{PID: pid, Started: t}
			case strings.HasPrefix(m[3], "end:") && run != nil && run.PID == pid:
				run.Ended = t
				run.Result = strings.TrimSpace(strings.TrimPrefix(m[3], "end:"))
			}
		}
		if isError(text) {
			add(CronLogFile, n, text)
		}
	})
	if len(errs) == 0 {
		others, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, f := range others {
			if filepath.Base(f) == CronLogFile {
				continue
			}
			eachLine(f, func(n int, text string) {
				if isError(text) {
					add(filepath.Base(f), n, text)
				}
			})
		}
	}
	return run, errs
}

// eachLine calls fn with each line of a file (numbered from 1); a missing
// file has none. Lines longer than 1 MiB are cut.
func eachLine(path string, fn func(n int, text string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fn(n, sc.Text())
	}
}
