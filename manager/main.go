// Command manager is the crawler's long-term scheduler: it scores the
// pages of the link graph and writes the next batch for the harvester.
// See docs/manager.md.
package main

import "github.com/wirecrawl/wire/pkg/command"

func main() { command.Main(newApp()) }
