// Command seeder creates collections, adds seed URLs and takes gathered
// batches into the link graph (graph.db). See docs/seeder.md.
package main

import "github.com/wirecrawl/wire/pkg/command"

func main() { command.Main(newApp()) }
