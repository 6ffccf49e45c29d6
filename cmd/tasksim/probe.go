package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/redact"
)

// runProbe is `tasksim probe --target URL [--header 'K: V']... [--timeout D] [--create-task]
// [--protocol V] [--pin FILE | --expect FILE]`: the target's capability manifest
// (client.Manifest, the one `run` embeds in summary.json) as indented JSON on stdout, of
// the era found (server/discover first, docs/RULES.md#e32) or pinned by --protocol; --pin
// writes it as a pin file, --expect compares it with one (client.Pin). Exit codes: 0
// printed (and pinned, or as expected), 1 the target could not be probed (unreachable, or
// discovery, initialize or tools/list failed), 2 bad flags or pin file, 99 drift from the
// pin.
func runProbe(args []string, stdout, stderr io.Writer) (err error) {
	secrets := &redact.Set{} // the --header values: never printed
	defer func() { err = secrets.Error(err) }()
	f, err := parseProbeFlags(args)
	if err != nil {
		return err
	}
	t := &client.Target{
		URL:        f.target,
		Header:     http.Header{},
		Client:     client.NewHTTPClient(2),
		ClientInfo: mcp.Implementation{Name: "tasksim", Version: version},
		Protocol:   f.protocol,
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("%s", headerProblem(h))
		}
		v = strings.TrimSpace(v)
		t.Header.Set(strings.TrimSpace(k), v)
		secrets.Note(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	m, err := client.ProbeWith(ctx, t, f.opts)
	if err != nil {
		err = client.ProbeTimedOut(ctx, err, f.timeout, "--timeout sets it")
		var me *client.ModernOnlyError
		if errors.As(err, &me) && f.protocol == client.ProtocolLegacy {
			err = fmt.Errorf("%w (leave out --protocol %s, or give --protocol %s, to describe it in %s)", err,
				client.ProtocolLegacy, client.ProtocolModern, client.ProtocolModern)
		}
		return err // exit 1: the reason, never a token (redacted on return)
	}
	if !f.createTask {
		m.Notes = append(m.Notes, "poll_interval_ms and ttl_ms are null: no task was created (pass --create-task to create and cancel one; it runs real work on the target)")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if b, err = withoutKeys(b, runOnlyKeys...); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(stdout, "%s\n", secrets.String(string(b))); err != nil {
		return err
	}
	switch {
	case f.pinFile != "":
		return writeProbePin(stderr, f.pinFile, m)
	case f.pin != nil:
		return expectPin(stderr, f.pin, f.expectFile, m)
	}
	return nil
}

// probeFlags are the values of probe's flags, as given, with what parsing them made: the
// pin of --expect, read, and the options of --create-task.
type probeFlags struct {
	target         string
	headers        []string
	timeout        time.Duration
	createTask     bool
	tool, toolArgs string
	protocol       string
	pinFile        string
	expectFile     string

	pin  *client.Pin         // read from expectFile; nil without --expect
	opts client.ProbeOptions // --create-task, --tool, --args
}

// parseProbeFlags parses probe's command line and refuses what is wrong in it alone (--pin
// with --expect, an unreadable pin, arguments, the target URL, --timeout, --tool or --args
// without --create-task, --protocol) as usage errors, before anything is sent. --protocol
// auto becomes client.ProtocolAuto.
func parseProbeFlags(args []string) (*probeFlags, error) {
	f := &probeFlags{}
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	fs.Usage = func() { probeUsage(fs) }
	fs.StringVar(&f.target, "target", "", "`URL` of the MCP endpoint (required)")
	fs.StringArrayVar(&f.headers, "header", nil, "extra HTTP header, `'K: V'` (repeatable; values are never printed)")
	fs.DurationVar(&f.timeout, "timeout", 15*time.Second, "bound on the whole probe")
	fs.BoolVar(&f.createTask, "create-task", false, "create (and cancel) one task, to observe pollInterval and ttl; it runs real work on the target")
	fs.StringVar(&f.tool, "tool", "", "with --create-task: the task tool to call (default: the first tool that supports tasks)")
	fs.StringVar(&f.toolArgs, "args", "", "with --create-task: the tool's arguments as a JSON object (default: the minimal ones its inputSchema requires)")
	fs.StringVar(&f.protocol, "protocol", "auto", "the era to speak, `auto|2025-11-25|2026-07-28`: auto finds it with server/discover (E32)")
	fs.StringVar(&f.pinFile, "pin", "", "write the manifest as a pin `FILE` (to check later with --expect, or a run's expect_manifest)")
	fs.StringVar(&f.expectFile, "expect", "", "compare the manifest with the pin `FILE`: exit 99 with a diff when it drifted")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if f.pinFile != "" && f.expectFile != "" {
		return nil, usagef("--pin writes a pin and --expect checks one: give one of them")
	}
	if f.expectFile != "" {
		var err error
		if f.pin, err = client.ReadPin(f.expectFile); err != nil {
			return nil, usageError{err}
		}
	}
	if fs.NArg() > 0 {
		return nil, usagef("probe takes no arguments, got %q", fs.Args())
	}
	if err := checkTarget(f.target); err != nil {
		return nil, err
	}
	if f.timeout <= 0 {
		return nil, usagef("--timeout must be > 0, got %v", f.timeout)
	}
	f.opts = client.ProbeOptions{CreateTask: f.createTask, Tool: f.tool}
	if (f.tool != "" || f.toolArgs != "") && !f.createTask {
		return nil, usagef("--tool and --args choose the task of --create-task: give --create-task too")
	}
	if f.toolArgs != "" {
		if err := json.Unmarshal([]byte(f.toolArgs), &f.opts.Args); err != nil || f.opts.Args == nil {
			return nil, usagef("--args: not a JSON object: %s", f.toolArgs)
		}
	}
	switch f.protocol {
	case "auto":
		f.protocol = client.ProtocolAuto
	case client.ProtocolLegacy, client.ProtocolModern:
	default:
		return nil, usagef("--protocol %q: want auto, %s or %s", f.protocol, client.ProtocolLegacy, client.ProtocolModern)
	}
	return f, nil
}

// probeUsage writes probe's help on fs's output: what the manifest holds, how the era is
// found, what --create-task does to the target, pinning, the exit codes, then the flags.
func probeUsage(fs *pflag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: tasksim probe --target URL [flags]

Prints the target's capability manifest as indented JSON on stdout (the one run records
in summary.json): protocol version and era, server, session evidence (session id, DELETE,
GET stream), tasks capability leaves, each tool's taskSupport and, with --create-task, the
pollInterval and ttl of one task. Header values are never printed.

The era is found first (docs/RULES.md#e32): server/discover is sent with the 2026-07-28
envelope and headers; a DiscoverResult or a modern error means 2026-07-28, anything else
falls back to initialize (2025-11-25). A target that speaks only 2026-07-28 is described in
it (era "2026-07-28": server/discover's versions, the Tasks extension as tasks.extension, no
session); a target of both eras is described in the era run speaks to it (2026-07-28 when it
advertises the Tasks extension, else 2025-11-25, era_fallback saying why), with "eras"
listing both. --protocol pins the era and skips the detection.

--create-task runs real work on the target: it calls --tool (default: the first tool that
supports tasks) with --args (default: the minimal arguments its inputSchema requires, when
they can be built), then cancels the task where tasks/cancel is declared. In 2026-07-28 the
call declares the Tasks extension and the server decides whether it becomes a task: a task
is cancelled with tasks/cancel, a synchronous answer is noted.

--pin FILE writes the manifest as a pin file (docs/ARCHITECTURE.md#pin): protocol and era, server
name and version, capability leaves, whether sessions are issued, each tool's taskSupport
and a hash of its inputSchema, and with --create-task the pollInterval and ttl granted.
Edit its allow section to let a field change (any, or a range {min, max}). --expect FILE
compares the manifest with a pin and prints each drift (field, pinned, now) on stderr: pin
at approval time, expect on every promotion. A pin with pollInterval and ttl needs
--create-task to be checked: without it they are drift, "not observed".

Exit codes: 0 printed (pinned, or no drift), 1 the target could not be probed
(unreachable, or discovery, initialize or tools/list failed), 2 usage (or a bad pin file),
99 the manifest drifted from the pin.

Flags:
`)
	fs.PrintDefaults()
}

// writeProbePin writes m as the pin file name, keeping the allow entries of the pin it
// replaces (a re-pin must not undo what a reviewer allowed), and says so on stderr.
func writeProbePin(stderr io.Writer, name string, m *client.Manifest) error {
	pin := client.NewPin(m, time.Now())
	kept := ""
	if old, err := client.ReadPin(name); err == nil && len(old.Allow) > 0 {
		pin.Allow = old.Allow // a re-pin keeps the changes a reviewer allowed
		kept = fmt.Sprintf(" (kept the %d allow entries of the pin it replaces)", len(old.Allow))
	}
	if err := os.WriteFile(name, pin.Marshal(), 0o644); err != nil {
		return fmt.Errorf("--pin: %w", err)
	}
	fmt.Fprintf(stderr, "tasksim probe: pinned the manifest in %s%s\n", name, kept)
	return nil
}

// expectPin compares m with pin (read from name): nil when nothing drifted, else a
// gateError after the diff on w, one drift a line.
func expectPin(w io.Writer, pin *client.Pin, name string, m *client.Manifest) error {
	drift := pin.Check(m)
	if len(drift) == 0 {
		fmt.Fprintf(w, "tasksim probe: the manifest matches the pin %s\n", name)
		return nil
	}
	fmt.Fprint(w, driftTable(drift))
	return gateError{fmt.Sprintf("the manifest drifted from the pin %s: %d field(s) changed", name, len(drift))}
}

// driftTable is a drift list as an aligned table: field, pinned value, value now.
func driftTable(drift []client.Drift) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "drift\tfield\tpinned\tnow")
	for _, d := range drift {
		fmt.Fprintf(tw, "\t%s\t%s\t%s\n", d.Field, d.Pinned, d.Now)
	}
	_ = tw.Flush()
	return b.String()
}

// checkTarget checks a command's --target: given, and an http(s) URL with a host.
func checkTarget(target string) error {
	if target == "" {
		return usagef("--target URL is required")
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--target %q is not an http(s) URL", target)
	}
	return nil
}

// runOnlyKeys are the manifest's fields that say how a run calls its tool: a probe calls
// none, and would print them empty ("as_task": false beside the task it created).
var runOnlyKeys = []string{"tool", "tool_task_support", "as_task", "fallback", "fallback_interval_ms"}

// withoutKeys returns the JSON object b without the top-level members named keys, in its
// order, indented by two spaces.
func withoutKeys(b []byte, keys ...string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.WithIndent("  "))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("manifest: not a JSON object")
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // the token is void after the next read
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if slices.Contains(keys, name) {
			continue
		}
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(val); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}
