package main

import (
	"os"
	"os/signal"
	"syscall"
)

// onSignals watches SIGINT and SIGTERM for a command that stops in two steps: the first
// signal calls first, which returns what the second does; nil gives the second its default
// action back (the process ends). Calling the returned func ends the watch.
func onSignals(first func() (second func())) (stop func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		second := first()
		if second == nil {
			signal.Stop(sig)
			return
		}
		select {
		case <-sig:
			second()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
