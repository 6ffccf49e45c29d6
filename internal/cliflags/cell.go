package cliflags

import (
	"time"

	"github.com/spf13/pflag"
)

// Cell is the flags of `tasksim sweep` that every cell hands on to its run (BindCell): a
// cell is the `tasksim run` command line RunArgs, then its own values (sweep.RunFlags), so
// these are Load's flags under the sweep's names and help. The fields hold the values as
// given.
type Cell struct {
	Duration time.Duration // --cell-duration: each cell's --duration; 0 is the scenario's
	Target   string        // --target; "" is the embedded server
	Headers  []string      // --header, each 'K: V'
	Protocol string        // --protocol; "" is run's default (auto)
	Sets     []string      // --set, each path=value
	TLS      TLS           // the TLS flags of an https target
}

// BindCell defines the sweep's flags of every cell on fs.
func BindCell(fs *pflag.FlagSet) *Cell {
	c := &Cell{}
	fs.DurationVar(&c.Duration, "cell-duration", 0, "load phase of each cell (default: the scenario's duration)")
	fs.StringVar(&c.Target, "target", "", "`URL` of a real MCP endpoint (default: the embedded mock server)")
	fs.StringArrayVar(&c.Headers, "header", nil, "extra HTTP header for the target, `'K: V'` (repeatable; values are never printed)")
	fs.StringVar(&c.Protocol, "protocol", "", "the era every cell's clients speak, `auto|2025-11-25|2026-07-28` (as run's --protocol; --vary protocol=... compares eras)")
	fs.StringArrayVar(&c.Sets, "set", nil, "override a scenario field in every cell, `path=value` (repeatable)")
	c.TLS.Bind(fs)
	return c
}

// RunArgs are the run flags (Load's) every cell is given, in this order: --duration,
// --target, each --header, --protocol, the TLS flags, each --set; a flag left at its zero
// value is left out.
func (c *Cell) RunArgs() []string {
	var args []string
	if c.Duration > 0 {
		args = append(args, "--duration", c.Duration.String())
	}
	if c.Target != "" {
		args = append(args, "--target", c.Target)
	}
	for _, h := range c.Headers {
		args = append(args, "--header", h)
	}
	if c.Protocol != "" {
		args = append(args, "--protocol", c.Protocol)
	}
	for _, f := range []struct{ name, value string }{{"--ca-cert", c.TLS.CACert}, {"--client-cert", c.TLS.ClientCert}, {"--client-key", c.TLS.ClientKey}} {
		if f.value != "" {
			args = append(args, f.name, f.value)
		}
	}
	if c.TLS.InsecureSkipVerify {
		args = append(args, "--insecure-skip-verify")
	}
	for _, s := range c.Sets {
		args = append(args, "--set", s)
	}
	return args
}
