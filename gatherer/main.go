// Command gatherer parses harvested batches: it decodes and parses every
// page, writes the batch's document records for the seeder and stores the
// pages' text in the collection's text store. See docs/gatherer.md.
package main

import "github.com/wirecrawl/wire/pkg/command"

func main() { command.Main(newApp()) }
