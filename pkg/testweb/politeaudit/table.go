package politeaudit

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes the report as a table: one row of figures under a
// header (label names the row, e.g. the build audited), then the
// requests per hostile host, the worst cases and the problems.
func (r *Report) WriteTable(w io.Writer, label string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\trequests\thosts\tunits\taddresses\tmax in flight/unit\tmax in flight/address\tunit overlaps\tover per-IP cap\tgaps under wait/Crawl-delay\taddress-floor violations\tconnection overlaps\t")
	fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", label, r.Requests, r.Hosts, r.Units, r.Addresses,
		r.MaxInFlightUnit, r.MaxInFlightAddress, r.UnitOverlaps, r.AddressOverCap, r.ShortGaps, r.FloorViolations, r.ConnOverlaps)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write audit table: %w", err)
	}
	fmt.Fprintf(w, "units of several names %d, addresses of several units %d, requests without an address %d; gaps under a Crawl-delay rule %d; shortest gap %v (%s), shortest time between starts on one address %v\n",
		r.SharedUnits, r.SharedAddresses, r.NoAddress, r.DelayGaps, roundDur(r.MinGap), r.MinGapUnit, roundDur(r.MinStartGap))
	if r.ShortGaps > 0 {
		fmt.Fprintf(w, "worst gap on %d unit(s): %s\n", r.ShortGapUnits, r.WorstGap)
	}
	if r.FloorViolations > 0 {
		fmt.Fprintf(w, "worst address floor on %d address(es): %s\n", r.FloorAddresses, r.WorstFloor)
	}
	if len(r.Hostile) > 0 {
		tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "hostile host\tkind\trequests\tpages")
		for _, h := range r.Hostile {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", h.Host, h.Kind, h.Requests, h.Pages)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write audit table: %w", err)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "PROBLEM", p)
	}
	if n := r.Violations(); n > len(r.Problems) {
		fmt.Fprintf(w, "(%d more violations not described)\n", n-len(r.Problems))
	}
	_, err := fmt.Fprintf(w, "politeness violations: %d\n", r.Violations())
	return err
}
