package mcp

import (
	"bytes"
	"io"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// ModernSummary is what a server needs of a modern request that ScanModernRequest found well
// formed: what ReadRequestMeta's RequestMeta says of the Tasks extension and of form
// elicitation, and the value Mcp-Name mirrors.
type ModernSummary struct {
	DeclaresTasks bool // RequestMeta.ClientCapabilities.DeclaresTasks()
	SupportsForm  bool // RequestMeta.ClientCapabilities.Elicitation.SupportsForm()
	// Name is the string member NameParam(method) names, without its quotes: a span of the
	// params, plain (no escape), equal to the Mcp-Name header; nil for a method without one.
	Name []byte
}

// ScanModernRequest is ClassifyRequest, CheckHeaders and ReadRequestMeta for the common,
// well-formed modern request, in one validating pass over its params (jsontext) that builds no map and allocates nothing. ok reports that the three would
// have found the request modern and without fault: ClassifyRequest (EraModern, nil),
// CheckHeaders nil, ReadRequestMeta nil, and the summary says what its RequestMeta says.
//
// Anything unusual makes ok false, and the caller runs the three full readers, which say
// what is wrong, if anything: a notification, an escape in a member name or in a value it
// compares, a member repeated or named in another case where encoding/json would fold it,
// a value of an unexpected type, a version not supported, an encoded Mcp-Name, a header that
// does not match. FuzzScanModernMatchesFull holds it to the full readers.
func ScanModernRequest(m *Message, h RequestHeaders, supported []string) (s ModernSummary, ok bool) {
	if m.Kind != KindRequest || h.Method == "" || h.Method != m.Method || h.ProtocolVersion == "" ||
		!validHeaderValue(h.ProtocolVersion) || !validHeaderValue(h.Method) || !validHeaderValue(h.Name) {
		return s, false
	}
	nameParam := NameParam(m.Method)
	if nameParam != "" && (h.Name == "" || looksEncoded(h.Name)) {
		return s, false // an encoded (or missing) Mcp-Name: CheckHeaders decodes it
	}
	p := bytes.TrimSpace(m.Params)
	if len(p) == 0 || p[0] != '{' {
		return s, false
	}
	sp := walkers.Get().(*pooledDecoder)
	defer sp.release()
	sp.big = len(p) > bigInput
	sp.r.Reset(p)
	sp.dec.Reset(&sp.r, splitOpts...)
	w := walker{d: sp.dec, b: p}
	var mv metaValues
	var seen uint8
	const seenMeta, seenName = 1, 2
	if !w.object(func(name []byte) bool {
		switch {
		case string(name) == "_meta":
			if seen&seenMeta != 0 || w.d.PeekKind() != '{' {
				return false
			}
			seen |= seenMeta
			return w.meta(&mv)
		case nameParam != "" && string(name) == nameParam:
			v, ok := w.value()
			if !ok || seen&seenName != 0 || !quotedPlain(v) {
				return false
			}
			seen |= seenName
			s.Name = v[1 : len(v)-1]
			return true
		case nameParam != "" && FoldsTo(name, nameParam):
			return false // encoding/json would read it (mockserver's taskParam)
		}
		_, ok := w.value()
		return ok
	}) {
		return ModernSummary{}, false
	}
	if _, err := w.d.ReadToken(); err != io.EOF { // nothing may follow the object
		return ModernSummary{}, false
	}
	switch v := string(mv.version); {
	case mv.version == nil || !mv.caps || !IsModern(v) || !slices.Contains(supported, v) || v != h.ProtocolVersion:
		return ModernSummary{}, false
	case nameParam != "" && (s.Name == nil || string(s.Name) != h.Name):
		return ModernSummary{}, false
	}
	s.DeclaresTasks = mv.tasks
	s.SupportsForm = mv.elicitation && (mv.form || !mv.url)
	return s, true
}

// metaValues is what ScanModernRequest reads of _meta.
type metaValues struct {
	version                []byte // the protocol version, without quotes; nil when absent
	caps                   bool   // clientCapabilities is present, an object
	tasks                  bool   // it declares the Tasks extension
	elicitation, form, url bool   // it has elicitation, with form and url (not null)
}

// pooledDecoder is a jsontext decoder over a reader, reused through walkers.
type pooledDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
	big bool // it read an input over bigInput (release)
}

// release gives d back to walkers, holding nothing of its last input; a decoder that grew
// for a large input is left to the collector.
func (d *pooledDecoder) release() {
	d.r.Reset(nil)
	if !d.big {
		walkers.Put(d)
	}
}

// bigInput is the size of an input after which a decoder is not pooled again: its buffer
// grew to hold it.
const bigInput = 64 << 10

var walkers = sync.Pool{New: func() any {
	d := new(pooledDecoder)
	d.dec = jsontext.NewDecoder(&d.r)
	return d
}}

// splitOpts keep encoding/json's tolerance: a repeated member (the last counts) and
// invalid UTF-8 inside strings are not syntax errors.
var splitOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// walker reads nested JSON objects of b with d, in one pass.
type walker struct {
	d *jsontext.Decoder
	b []byte
}

// value reads the next value, which must be there, and returns it as a span of b.
func (w *walker) value() ([]byte, bool) {
	v, err := w.d.ReadValue()
	if err != nil {
		return nil, false
	}
	end := int(w.d.InputOffset())
	return w.b[end-len(v) : end], true
}

// object reads an object and calls visit with each member's name (without its quotes, a span
// of b), which must read the member's value. A name with an escape, a syntax error or a false
// from visit make it report false.
func (w *walker) object(visit func(name []byte) bool) bool {
	if tok, err := w.d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for {
		switch w.d.PeekKind() {
		case '}':
			_, err := w.d.ReadToken()
			return err == nil
		case 0:
			return false
		}
		raw, ok := w.value()
		if !ok || bytes.IndexByte(raw, '\\') >= 0 {
			return false
		}
		if !visit(raw[1 : len(raw)-1]) {
			return false
		}
	}
}

// objectOrNull reads a value that must be an object or null, as a *Leaf or a pointer to a
// struct takes it, and reports whether it was an object.
func (w *walker) objectOrNull() (object, ok bool) {
	k := w.d.PeekKind()
	if k != '{' && k != 'n' {
		return false, false
	}
	_, ok = w.value()
	return k == '{', ok
}

// meta reads params._meta into mv.
func (w *walker) meta(mv *metaValues) bool {
	var seen uint8
	once := func(bit uint8) bool {
		dup := seen&bit != 0
		seen |= bit
		return !dup
	}
	return w.object(func(name []byte) bool {
		switch string(name) {
		case MetaProtocolVersion:
			v, ok := w.value()
			if !ok || !once(1) || !quotedPlain(v) {
				return false
			}
			mv.version = v[1 : len(v)-1]
			return true
		case MetaClientCapabilities:
			if !once(2) || w.d.PeekKind() != '{' {
				return false
			}
			mv.caps = true
			return w.caps(mv)
		case MetaClientInfo:
			return once(4) && w.d.PeekKind() == '{' && w.clientInfo()
		case MetaLogLevel:
			v, ok := w.value()
			return ok && once(8) && quotedPlain(v) && slices.Contains(logLevels, string(v[1:len(v)-1]))
		case MetaProgressToken:
			v, ok := w.value()
			return ok && once(16) && (v[0] == '"' || isStringOrInteger(v))
		}
		_, ok := w.value() // traceparent, vendor keys: ignored
		return ok
	})
}

// capsFields are the members of ModernClientCapabilities, which encoding/json matches in any
// case.
var capsFields = [...]string{"elicitation", "sampling", "roots", "experimental", "extensions"}

// caps reads clientCapabilities into mv, as json.Unmarshal into ModernClientCapabilities
// would accept it.
func (w *walker) caps(mv *metaValues) bool {
	var seen uint8
	return w.object(func(name []byte) bool {
		i, ok := w.field(name, capsFields[:], &seen)
		if i < 0 {
			return ok
		}
		switch name := capsFields[i]; {
		case name == "roots":
			_, ok := w.objectOrNull()
			return ok
		case w.d.PeekKind() == 'n':
			_, ok := w.value()
			return ok
		case w.d.PeekKind() != '{':
			return false
		case name == "elicitation":
			mv.elicitation = true
			return w.leaves(func(field string) { mv.form = mv.form || field == "form"; mv.url = mv.url || field == "url" }, "form", "url")
		case name == "sampling":
			return w.leaves(nil, "context", "tools")
		case name == "experimental":
			return w.settings(nil)
		}
		return w.settings(&mv.tasks)
	})
}

// field looks a member's name up among the fields of an object being walked (at most 8),
// as encoding/json matches them: i is its index when it is one of them and seen for the
// first time (marked in seen); i < 0 otherwise, with ok false for a repeated field or one
// under another case, which encoding/json would take for it, and ok true for an unknown
// member, whose value is then skipped.
func (w *walker) field(name []byte, fields []string, seen *uint8) (i int, ok bool) {
	i = slices.Index(fields, string(name))
	switch {
	case i >= 0 && *seen&(1<<i) != 0:
		return -1, false
	case i >= 0:
		*seen |= 1 << i
		return i, true
	case FoldsTo(name, fields...):
		return -1, false
	}
	_, ok = w.value()
	return -1, ok
}

// leaves reads an object of *Leaf fields (names in any case, for encoding/json): each must
// be an object or null; present is called with the name of each that is an object.
func (w *walker) leaves(present func(field string), fields ...string) bool {
	var seen uint8
	return w.object(func(name []byte) bool {
		i, ok := w.field(name, fields, &seen)
		if i < 0 {
			return ok
		}
		object, ok := w.objectOrNull()
		if object && present != nil {
			present(fields[i])
		}
		return ok
	})
}

// settings reads a map of settings objects (extensions, experimental): each value must be
// an object (ReadRequestMeta). tasks, when not nil, is set when the Tasks extension is one.
func (w *walker) settings(tasks *bool) bool {
	return w.object(func(name []byte) bool {
		if w.d.PeekKind() != '{' {
			return false
		}
		if tasks != nil && string(name) == ExtTasks {
			*tasks = true
		}
		_, ok := w.value()
		return ok
	})
}

// clientInfo reads a clientInfo object as ReadRequestMeta accepts it: a string name and
// version, a title that is a string or null (Implementation).
func (w *walker) clientInfo() bool {
	var seen uint8
	fields := [...]string{"name", "version", "title"}
	if !w.object(func(name []byte) bool {
		i, ok := w.field(name, fields[:], &seen)
		if i < 0 {
			return ok
		}
		v, ok := w.value()
		return ok && (v[0] == '"' || i >= 2 && string(v) == "null")
	}) {
		return false
	}
	return seen&3 == 3
}

// quotedPlain reports whether v is a JSON string without an escape, whose bytes between the
// quotes are its value when they are valid UTF-8.
func quotedPlain(v []byte) bool {
	return len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0
}
