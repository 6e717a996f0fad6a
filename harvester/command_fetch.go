package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
)

// fetchCommand is `harvester fetch`: fetch one URL as the harvester would.
func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch one URL with the harvester's client and print status, headers and size",
		ArgsUsage: "URL",
		Description: `A debugging aid: one GET with the harvester's User-Agent, DNS, address
policy, time limits, body cap and gzip handling, without robots.txt or waits.
The URL is normalised first, as a batch URL would be (user info dropped,
spaces and other bytes percent-encoded); a URL the normaliser refuses is a
usage error and nothing is sent. The status line and headers printed are the
ones the harvester would store: as received with harvester.warc_mode raw
(the default), decoded and sorted with decoded. --body prints the body
decoded from its content coding.

` + command.ExitCodes(command.ExitOK),
		Flags:  command.WithSettings(&cli.BoolFlag{Name: "body", Usage: "print the body too"}),
		Action: command.Action(parseFetch, runFetch),
	}
}

// fetchOptions is what `harvester fetch` needs.
type fetchOptions struct {
	Config config.Config
	URL    string
	Body   bool // print the body too
	Std    command.Std
}

func parseFetch(c *cli.Context) (fetchOptions, error) {
	cfg, err := command.LoadConfig(c)
	if err != nil {
		return fetchOptions{}, err
	}
	arg := c.Args().First()
	if _, err := cfg.Scope.Normalizer().Normalize(arg); err != nil {
		return fetchOptions{}, command.Usage("fetch: %w (nothing was done)", err)
	}
	return fetchOptions{Config: cfg, URL: arg, Body: c.Bool("body"), Std: command.StdFrom(c)}, nil
}

// runFetch fetches o.URL (normalised) as the harvester would and prints
// the status line, the headers, the size, the URL requested if
// normalising changed it, over TLS the protocol, cipher and the
// certificate's verdict, and (with o.Body) the body on out.
func runFetch(ctx context.Context, o fetchOptions, out io.Writer) error {
	resp, err := harvester.FetchOne(ctx, o.Config, o.URL, o.Std.Log())
	if resp == nil {
		return err
	}
	if resp.Head != nil {
		out.Write(bytes.ReplaceAll(resp.Head, []byte("\r\n"), []byte("\n")))
	} else {
		fmt.Fprintf(out, "%s\n", resp.StatusLine)
		keys := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range resp.Header[k] {
				fmt.Fprintf(out, "%s: %s\n", k, v)
			}
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "%d bytes stored from %s in %d ms", len(resp.Body), resp.IP, resp.Duration.Milliseconds())
	if resp.Coding != "" {
		fmt.Fprintf(out, " (%s, %d bytes decoded)", resp.Coding, resp.Size)
	}
	if resp.Dechunked {
		fmt.Fprint(out, " (sent chunked, stored de-chunked)")
	}
	if resp.Truncated != "" {
		fmt.Fprintf(out, " (truncated: %s)", resp.Truncated)
	}
	fmt.Fprintln(out)
	if ti := resp.TLS; ti != nil {
		cert := "certificate valid for the name"
		if !ti.Valid {
			cert = "certificate NOT valid: " + ti.Problem
		}
		resumed := ""
		if ti.Resumed {
			resumed = ", session resumed"
		}
		fmt.Fprintf(out, "%s %s%s; %s\n", ti.Version, ti.Cipher, resumed, cert)
	}
	if resp.URL != o.URL {
		fmt.Fprintf(out, "requested %s (the URL normalised)\n", resp.URL)
	}
	if loc := resp.Location(); loc != "" {
		fmt.Fprintf(out, "redirect to %s (not followed)\n", loc)
	}
	if o.Body {
		body, derr := resp.Content(o.Config.Harvester.MaxBodyBytes)
		out.Write(body)
		if len(body) > 0 && body[len(body)-1] != '\n' {
			fmt.Fprintln(out)
		}
		if derr != nil && err == nil {
			fmt.Fprintf(out, "(the body stops decoding here: %v)\n", derr)
		}
	}
	return err
}
