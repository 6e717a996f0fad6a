package fetchlog

import "time"

// ProgressFile is written into a partial harvest directory every few
// seconds while a harvester runs, and removed when the run ends:
// `manager status` reads it to show a harvest running under cron as its
// status line shows it on a terminal (docs/format/harvest.md).
const ProgressFile = "progress.json"

// Progress is the content of ProgressFile: the run so far.
type Progress struct {
	At      time.Time `json:"at"`      // when it was written
	Started time.Time `json:"started"` // when the run started
	PID     int       `json:"pid"`     // the harvester's process
	Total   int       `json:"total"`   // URLs the run has to log
	Logged  int       `json:"logged"`  // of which logged
	Pages   int       `json:"pages"`   // pages fetched
	Bytes   int64     `json:"bytes"`   // their body bytes
	Errors  int       `json:"errors"`  // URLs failed
	// URLRate and PageRate are URLs logged and pages fetched per second
	// over the last RateWindow seconds (not the whole run's average).
	URLRate    float64 `json:"urlRate"`
	PageRate   float64 `json:"pageRate"`
	RateWindow float64 `json:"rateWindow"`
	// ETASeconds is the time left at URLRate; -1 when unknown (no URL
	// logged in the window).
	ETASeconds   float64 `json:"etaSeconds"`
	HostsActive  int     `json:"hostsActive"`
	HostsWaiting int     `json:"hostsWaiting"`
	HostsDone    int     `json:"hostsDone"`
	// Holding are the hosts holding the batch up: those with the most
	// URLs left, most first.
	Holding []HostLeft `json:"holding,omitempty"`
}

// HostLeft is a host and the URLs of the batch it has left.
type HostLeft struct {
	Host string `json:"host"`
	Left int    `json:"left"`
}
