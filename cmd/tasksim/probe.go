package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// runProbe is `tasksim probe --target URL [flags]`: the target's capability manifest
// (client.ProbeWith; printed by Manifest.ProbeJSON) on stdout, and with --pin or --expect
// the pin written or checked (client.WritePin, Pin.Check). help/probe.txt says what and why.
func runProbe(args []string, stdout, stderr io.Writer) (err error) {
	secrets := &redact.Set{} // the --header values: never printed
	defer func() { err = secrets.Error(err) }()
	f, err := parseProbeFlags(args)
	if err != nil {
		return err
	}
	t, opts, err := f.probe.Options(secrets)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.probe.Timeout)
	defer cancel()
	m, err := client.ProbeWith(ctx, t, opts)
	if err != nil {
		err = client.ProbeTimedOut(ctx, err, f.probe.Timeout, "--timeout sets it")
		var me *client.ModernOnlyError
		if errors.As(err, &me) && t.Protocol == client.ProtocolLegacy {
			err = fmt.Errorf("%w (leave out --protocol %s, or give --protocol %s, to describe it in %s)", err,
				client.ProtocolLegacy, client.ProtocolModern, client.ProtocolModern)
		}
		return err // exit 1: the reason, never a token (redacted on return)
	}
	if !opts.CreateTask {
		m.Notes = append(m.Notes, "poll_interval_ms and ttl_ms are null: no task was created (pass --create-task to create and cancel one; it runs real work on the target)")
	}
	b, err := m.ProbeJSON()
	if err != nil {
		return err
	}
	if _, err = fmt.Fprintf(stdout, "%s\n", secrets.String(string(b))); err != nil {
		return err
	}
	switch {
	case f.pinFile != "":
		kept, err := client.WritePin(f.pinFile, m, time.Now())
		if err != nil {
			return fmt.Errorf("--pin: %w", err)
		}
		fmt.Fprintf(stderr, "tasksim probe: pinned the manifest in %s%s\n", f.pinFile, keptNote(kept))
	case f.pin != nil:
		return expectPin(stderr, f.pin, f.expectFile, m)
	}
	return nil
}

// probeFlags are probe's flags: those of the probe itself (cliflags.Probe) and the pin's,
// with the pin of --expect, read.
type probeFlags struct {
	probe      *cliflags.Probe
	pinFile    string
	expectFile string
	pin        *client.Pin // read from expectFile; nil without --expect
}

// parseProbeFlags parses probe's command line and refuses what is wrong in it alone (--pin
// with --expect, an unreadable pin, arguments, then the probe's flags:
// cliflags.Probe.Check) as usage errors, before anything is sent.
func parseProbeFlags(args []string) (*probeFlags, error) {
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	f := &probeFlags{probe: cliflags.BindProbe(fs)}
	setHelp(fs)
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
			return nil, usageError(err)
		}
	}
	if fs.NArg() > 0 {
		return nil, usagef("probe takes no arguments, got %q", fs.Args())
	}
	return f, f.probe.Check()
}

// keptNote says how many allow entries a re-pin kept from the pin it replaced.
func keptNote(kept int) string {
	if kept == 0 {
		return ""
	}
	return fmt.Sprintf(" (kept the %d allow entries of the pin it replaces)", kept)
}

// expectPin compares m with pin (read from name): nil when nothing drifted, else a
// *runner.GateError after the drift table on w.
func expectPin(w io.Writer, pin *client.Pin, name string, m *client.Manifest) error {
	drift := pin.Check(m)
	if len(drift) == 0 {
		fmt.Fprintf(w, "tasksim probe: the manifest matches the pin %s\n", name)
		return nil
	}
	if err := client.WriteDriftTable(w, drift); err != nil {
		return err
	}
	return &runner.GateError{Why: fmt.Sprintf("the manifest drifted from the pin %s: %d field(s) changed", name, len(drift))}
}
