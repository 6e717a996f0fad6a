package simulate

// Exported for the external tests (package simulate_test), which run the
// batch model with the crawler's real stages from pkg/manager/simstages:
// that package imports this one, so only an external test can import it.
var (
	Build   = build
	Example = example
)
