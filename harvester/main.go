// Command harvester downloads a batch politely: robots.txt first, one
// connection per host, a wait between requests, hard limits on time and
// size. It needs only the batch file and the config. See docs/harvester.md.
package main

import "github.com/wirecrawl/wire/pkg/command"

func main() { command.Main(newApp()) }
