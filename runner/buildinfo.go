package runner

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// BuildDate is the build's date, set by the linker when the build says it:
//
//	go build -ldflags "-X github.com/tasksim/tasksim/runner.BuildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/tasksim
//
// A plain `go build` or `go run` records no build date; the commit's date is in the
// binary's VCS stamp then (Build.CommitTime).
var BuildDate string

// Build is what a binary knows of its own build (`tasksim version`).
type Build struct {
	Version    string // tasksim's version (Version)
	Module     string // the main module's version: a tag, a pseudo-version, or "(devel)"
	Commit     string // vcs.revision; "" when built outside a VCS checkout (or with -buildvcs=false)
	CommitTime string // vcs.time, RFC 3339; "" when unknown
	Modified   bool   // vcs.modified: built from a work tree with uncommitted changes
	Date       string // BuildDate; "" when the build did not set it
	Go         string // the Go toolchain
}

// BuildInfo reads the binary's build stamp (runtime/debug.ReadBuildInfo).
func BuildInfo() Build {
	b := Build{Version: Version, Module: "(unknown)", Date: BuildDate, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// WriteText prints b, one fact a line, saying what is unknown rather than leaving it out.
func (b Build) WriteText(w io.Writer) error {
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	commit := or(b.Commit, "unknown (built without VCS information)")
	if b.Modified {
		commit += " (with uncommitted changes)"
	}
	_, err := fmt.Fprintf(w, "tasksim %s\n%-10s %s\n%-10s %s\n%-10s %s\n%-10s %s\n%-10s %s\n", b.Version,
		"module", b.Module, "commit", commit, "committed", or(b.CommitTime, "unknown"),
		"built", or(b.Date, "unknown (set runner.BuildDate with -ldflags -X)"), "go", b.Go)
	return err
}
