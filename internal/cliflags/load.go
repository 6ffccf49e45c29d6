package cliflags

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// Load is the flags of `tasksim run` that set its scenario (BindLoad): the load, the target
// and its headers, the tool and its arguments, the era, the seed, the contract gate and
// --set. The fields hold the values as given; Scenario applies those that were given.
type Load struct {
	Target       string        // --target: the scenario's target; "" is the embedded server
	Clients      int           // --clients: workload.clients
	Rate         string        // --rate: the open model at this rate (workload.model, workload.rate)
	Duration     time.Duration // --duration: the load phase
	PollInterval time.Duration // --poll-interval: server.poll_interval and client.poll.interval
	Tool         string        // --tool
	Protocol     string        // --protocol: auto (the default), or an era
	Args         string        // --args: the tool's arguments, a JSON object
	Headers      []string      // --header, each 'K: V'
	Seed         uint64        // --seed
	SourceAddrs  string        // --source-addrs: a comma-separated list (client.source_addresses)
	Sets         []string      // --set, each path=value, applied last, in order
	Contract     bool          // --contract
	TLS          TLS           // --ca-cert, --client-cert, --client-key, --insecure-skip-verify: the scenario's tls

	fs *pflag.FlagSet // says which flags were given
}

// BindLoad defines the load flags on fs (run's, and so a sweep cell's) and returns where
// their values go once fs is parsed.
func BindLoad(fs *pflag.FlagSet) *Load {
	l := &Load{fs: fs}
	fs.StringVar(&l.Target, "target", "", "`URL` of a real MCP endpoint (target; default: the embedded mock server)")
	fs.IntVar(&l.Clients, "clients", 0, "number of clients (workload.clients; in the open model the client pool)")
	fs.StringVar(&l.Rate, "rate", "", "switch to the open model at this arrival `RATE`, e.g. 50/s (workload.model, workload.rate)")
	fs.DurationVar(&l.Duration, "duration", 0, "length of the load phase (duration)")
	fs.DurationVar(&l.PollInterval, "poll-interval", 0, "pollInterval the embedded server advertises, and the clients' fallback interval (server.poll_interval, client.poll.interval)")
	fs.StringVar(&l.Tool, "tool", "", "`NAME` of the tool to call (tool)")
	fs.StringVar(&l.Protocol, "protocol", "auto", "the era the clients speak, `auto|2025-11-25|2026-07-28` (protocol): auto asks server/discover first (E32)")
	fs.StringVar(&l.Args, "args", "", "tool arguments as a `JSON` object, replacing the scenario's args, e.g. '{\"duration_ms\":2000}'")
	fs.StringArrayVar(&l.Headers, "header", nil, "extra HTTP header for the target, `'K: V'` (headers; repeatable; values are never printed)")
	fs.Uint64Var(&l.Seed, "seed", 0, "seed of the run's random source (seed)")
	fs.StringVar(&l.SourceAddrs, "source-addrs", "", "dial the clients' connections from these local addresses, round robin: a comma-separated `LIST` of addresses, ranges A-B and prefixes A/N, e.g. 127.0.0.1-127.0.0.8 (client.source_addresses)")
	fs.StringArrayVar(&l.Sets, "set", nil, "override a scenario field, `path=value` (repeatable), e.g. client.poll.policy=fixed")
	fs.BoolVar(&l.Contract, "contract", false, "run the contract suite against the target before the load: the run's contract gate (contract)")
	l.TLS.Bind(fs)
	return l
}

// ParseLoad parses a run command line of load flags alone, a sweep cell's: a problem with it
// is a *runner.UsageError that points to sweep's help, where the user gave those flags and
// values (--vary).
func ParseLoad(args []string) (*Load, error) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l := BindLoad(fs)
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorf("%v (see 'tasksim sweep --help')", err)
	}
	return l, nil
}

// Scenario is the scenario NAME or FILE with the flags that were given applied, in the
// order of BindLoad and --set last, then validated (runner.CheckScenario). Every problem
// is a *runner.UsageError, a flag's naming the flag rather than --set.
func (l *Load) Scenario(name string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Load(name)
	if err != nil {
		return nil, &runner.UsageError{Err: err}
	}
	if err := errors.Join(l.apply(sc)...); err != nil {
		return nil, &runner.UsageError{Err: err}
	}
	if err := runner.CheckScenario(sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// apply sets the fields of the flags that were given on sc and returns every problem.
func (l *Load) apply(sc *scenarios.Scenario) []error {
	var errs []error
	set := func(flag, path, value string) { // a problem names the flag, not --set
		if err := sc.SetFrom("--"+flag, path, value); err != nil {
			errs = append(errs, err)
		}
	}
	given := l.fs.Changed
	if given("target") {
		sc.Target = l.Target
	}
	if given("clients") {
		set("clients", "workload.clients", strconv.Itoa(l.Clients))
	}
	if given("rate") {
		set("rate", "workload.model", "open")
		set("rate", "workload.rate", l.Rate)
	}
	if given("duration") {
		set("duration", "duration", l.Duration.String())
	}
	if given("poll-interval") {
		set("poll-interval", "server.poll_interval", l.PollInterval.String())
		set("poll-interval", "client.poll.interval", l.PollInterval.String())
	}
	if given("tool") {
		sc.Tool = l.Tool
	}
	if given("source-addrs") {
		set("source-addrs", "client.source_addresses", addrList(l.SourceAddrs))
	}
	if given("protocol") {
		errs = append(errs, l.setProtocol(set)...)
	}
	if given("args") {
		errs = append(errs, l.setArgs(sc)...)
	}
	errs = append(errs, addScenarioHeaders(sc, l.Headers)...)
	if given("seed") {
		sc.Seed = l.Seed
	}
	if given("contract") {
		set("contract", "contract", strconv.FormatBool(l.Contract))
	}
	if given("ca-cert") {
		sc.TLS.CACert = l.TLS.CACert
	}
	if given("client-cert") {
		sc.TLS.ClientCert = l.TLS.ClientCert
	}
	if given("client-key") {
		sc.TLS.ClientKey = l.TLS.ClientKey
	}
	if given("insecure-skip-verify") {
		sc.TLS.InsecureSkipVerify = l.TLS.InsecureSkipVerify
	}
	return append(errs, ApplySets(sc, l.Sets)...)
}

// addrList is --source-addrs' comma-separated list as a JSON array of its trimmed items,
// which YAML reads as a flow sequence.
func addrList(s string) string {
	var list []string
	for e := range strings.SplitSeq(s, ",") {
		list = append(list, strings.TrimSpace(e))
	}
	b, _ := json.Marshal(list) // strings always marshal
	return string(b)
}

// setProtocol sets --protocol's era with set; auto is the scenario's empty protocol.
func (l *Load) setProtocol(set func(flag, path, value string)) []error {
	switch l.Protocol {
	case "auto", client.ProtocolLegacy, client.ProtocolModern:
		set("protocol", "protocol", strings.TrimPrefix(l.Protocol, "auto"))
		return nil
	}
	return []error{fmt.Errorf("--protocol %q: want auto, %s or %s", l.Protocol, client.ProtocolLegacy, client.ProtocolModern)}
}

// setArgs replaces sc's tool arguments with --args, which must be a JSON object.
func (l *Load) setArgs(sc *scenarios.Scenario) []error {
	var a map[string]any
	if err := json.Unmarshal([]byte(l.Args), &a); err != nil {
		return []error{fmt.Errorf("--args: not a JSON object: %v", err)}
	}
	sc.Args = a
	return nil
}

// addScenarioHeaders adds the --header values to sc's headers, a later one replacing a
// same-named header, and returns a problem for each value that is not a header (SplitHeader:
// without showing the value).
func addScenarioHeaders(sc *scenarios.Scenario, headers []string) []error {
	var errs []error
	for _, h := range headers {
		k, v, err := SplitHeader("--header", h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sc.Headers == nil {
			sc.Headers = map[string]scenarios.Secret{}
		}
		sc.Headers[k] = scenarios.Secret(v)
	}
	return errs
}

// ApplySets applies --set path=value overrides to sc in order and returns every problem.
func ApplySets(sc *scenarios.Scenario, sets []string) []error {
	var errs []error
	for _, kv := range sets {
		path, value, ok := strings.Cut(kv, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("--set %q: want path=value", kv))
			continue
		}
		if err := sc.Set(path, value); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
