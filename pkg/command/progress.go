package command

import (
	"github.com/schollz/progressbar/v3"
)

// Progress shows a stage's progress on an interactive terminal and
// nothing otherwise (cron, pipes, --quiet). Safe for concurrent use.
type Progress struct {
	bar *progressbar.ProgressBar
}

// NewProgress starts a progress display of total steps (-1 if unknown)
// described by what (e.g. "fetching"), on std's standard error when
// std.Interactive.
func NewProgress(std Std, total int64, what string) *Progress {
	if !std.Interactive {
		return &Progress{}
	}
	return &Progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(std.Err),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("pages"),
		progressbar.OptionThrottle(200e6),
		progressbar.OptionClearOnFinish(),
	)}
}

// Add advances the display by n steps.
func (p *Progress) Add(n int) {
	if p != nil && p.bar != nil {
		p.bar.Add(n)
	}
}

// Done removes the display.
func (p *Progress) Done() {
	if p != nil && p.bar != nil {
		p.bar.Finish()
	}
}
