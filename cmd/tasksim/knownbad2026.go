package main

import (
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// knownBad2026 maps the modern era's modes of server.known_bad onto the embedded server's
// configuration (mockserver/knownbad2026.go). tasksim serve applies it; a run's embedded
// server speaks 2025-11-25 to its clients, and does not.
func knownBad2026(s scenarios.Server) mockserver.KnownBad2026 {
	return mockserver.KnownBad2026{
		NoResultType:        s.KnownBadOn(scenarios.KnownBadNoResultType),
		LenientEnvelope:     s.KnownBadOn(scenarios.KnownBadLenientEnvelope),
		NoHeaderCheck:       s.KnownBadOn(scenarios.KnownBadNoHeaderCheck),
		UnknownMethod200:    s.KnownBadOn(scenarios.KnownBadUnknownMethod200),
		LegacyMethods:       s.KnownBadOn(scenarios.KnownBadLegacyMethods),
		TasksUndeclared:     s.KnownBadOn(scenarios.KnownBadTasksUndeclared),
		ModernMissingFields: s.KnownBadOn(scenarios.KnownBadModernMissingFields),
		GetNotReady:         s.KnownBadOn(scenarios.KnownBadGetNotReady),
		IsErrorFailed:       s.KnownBadOn(scenarios.KnownBadIsErrorFailed),
		NoInlinePayload:     s.KnownBadOn(scenarios.KnownBadNoInlinePayload),
		ReuseInputKeys:      s.KnownBadOn(scenarios.KnownBadReuseInputKeys),
		AckWithTask:         s.KnownBadOn(scenarios.KnownBadAckWithTask),
	}
}
