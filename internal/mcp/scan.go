package mcp

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDepth is the deepest nesting of arrays and objects a scanner accepts: encoding/json's
// and jsontext's bound.
const maxDepth = 10000

// scanner validates JSON text by RFC 8259 in one pass over b, as json.Valid does but without
// a state machine per byte: a tasks/get reply is read twice (its envelope by Decode, its
// result by ParseTask), and jsontext's tokenizer cost more than the rest of the round trip's
// decoding together. Invalid UTF-8 inside strings is accepted, as encoding/json accepts it
// (the value is then read by encoding/json, which replaces it); so are lone surrogate
// escapes. It never allocates.
type scanner struct {
	b     []byte
	i     int  // the next byte to read
	plain bool // the last string str skipped has no escape and is ASCII
}

// ws skips whitespace (space, tab, LF, CR: nothing else is JSON whitespace). It is small
// enough to be inlined where, as mostly, there is none.
func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] <= ' ' {
		s.skipWS()
	}
}

// skipWS is ws's loop.
func (s *scanner) skipWS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte, 0 at the end of the input.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// value skips one value at s.i, nested depth deep; false on a syntax error.
func (s *scanner) value(depth int) bool {
	switch s.peek() {
	case '"':
		return s.str()
	case '{':
		return s.object(depth + 1)
	case '[':
		return s.array(depth + 1)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return s.number()
}

// lit skips the literal word.
func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// str skips a string, its quotes included, and sets s.plain to whether it reads as itself:
// no escape, ASCII only. Its plain bytes are skipped eight at a time up to the next quote,
// escape or control byte (specialBytes), the last bytes of the input one at a time.
func (s *scanner) str() bool {
	const hi = 0x8080808080808080
	b, i := s.b, s.i+1
	var high uint64 // the high bits of the bytes skipped: any set is a byte beyond ASCII
	esc := false
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if m := specialBytes(x); m != 0 {
				high |= x & (m&-m - 1) // the bytes below the first special one
				i += bits.TrailingZeros64(m) / 8
				break
			}
			high |= x
			i += 8
		}
		if i+8 > len(b) { // the last bytes of the input: one at a time
			for i < len(b) && plainByte[b[i]] {
				high |= uint64(b[i])
				i++
			}
		}
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			s.plain = !esc && high&hi == 0
			return true
		case '\\':
			esc = true
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		default: // a control byte
			return false
		}
	}
}

// specialBytes marks (with its high bit) each byte of x, eight bytes of a string read little
// endian, that is a quote, a backslash or a control byte (below 0x20), by the has-zero-byte
// test on x, x^'"' and x^'\\'; bytes of 0x80 and above are plain. A borrow may also mark a
// byte above a marked one, never the lowest: that one is exact.
func specialBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(lo*'"'), x^(lo*'\\')
	return ((x-lo*0x20)&^x | (q-lo)&^q | (bs-lo)&^bs) & hi
}

// plainByte marks the bytes a string holds as they are: all but the quote, the backslash
// and the control bytes.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// digits skips one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// array skips an array, nested depth deep.
func (s *scanner) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	s.i++ // '['
	s.ws()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// object skips an object, nested depth deep.
func (s *scanner) object(depth int) bool {
	if depth > maxDepth {
		return false
	}
	s.i++ // '{'
	s.ws()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if _, _, _, ok := s.member(depth); !ok {
			return false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// member skips one member of an object nested depth deep ("name": value) and leaves s.i
// after its value; it returns where the name ends (after its closing quote), where the
// value starts, and whether the name is plain (str).
func (s *scanner) member(depth int) (nameEnd, valueStart int, plainName, ok bool) {
	if s.peek() != '"' || !s.str() {
		return 0, 0, false, false
	}
	nameEnd, plainName = s.i, s.plain
	s.ws()
	if s.peek() != ':' {
		return 0, 0, false, false
	}
	s.i++
	s.ws()
	valueStart = s.i
	return nameEnd, valueStart, plainName, s.value(depth)
}

// objectReader reads the members of one JSON object, the whole input (whitespace around it
// allowed), in one validating pass without callbacks: next steps to each member in turn,
// and ok tells, once next has reported false, whether the input was exactly one valid
// object. A reader made by objectAt reads an object nested in another's input instead: it
// ends at its closing brace, and the outer reader goes on from there (endNested).
type objectReader struct {
	s           scanner
	state       uint8
	depth       int    // the nesting of the object read: 1 for the input's own
	nested      bool   // the object is a value inside the input (objectAt)
	name, value []byte // the current member's unescaped name and raw value (a span of b)
	// plainString says the value is a string that reads as itself (no escape, ASCII).
	plainString bool
}

// objectReader states.
const (
	orFirst  uint8 = iota // before the first member
	orNext                // after a member
	orDone                // the object (and, but for a nested one, the input) ended, valid
	orFailed              // not one valid object
)

// newObjectReader returns a reader of b's members.
func newObjectReader(b []byte) objectReader {
	r := objectReader{s: scanner{b: b}, depth: 1}
	r.s.ws()
	if r.s.peek() != '{' {
		r.state = orFailed
	}
	r.s.i++
	return r
}

// next steps to the next member, reporting false after the last one or on a syntax error.
func (r *objectReader) next() bool {
	return r.nextName() && r.skipValue()
}

// nextName steps to the next member's name, reporting false after the last member or on a
// syntax error. After true, r.name is the name and the scanner is at the member's value,
// which skipValue reads, or objectAt when it is an object read member by member.
func (r *objectReader) nextName() bool {
	s := &r.s
	s.ws()
	switch r.state {
	case orFirst:
		if s.peek() == '}' {
			return r.end()
		}
	case orNext:
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case '}':
			return r.end()
		default:
			r.state = orFailed
			return false
		}
	default:
		return false
	}
	start := s.i
	if s.peek() != '"' || !s.str() {
		r.state = orFailed
		return false
	}
	nameEnd, plainName := s.i, s.plain
	s.ws()
	if s.peek() != ':' {
		r.state = orFailed
		return false
	}
	s.i++
	s.ws()
	r.name = s.b[start+1 : nameEnd-1]
	if !plainName {
		r.name = unquoteName(s.b[start:nameEnd])
	}
	r.state = orNext
	return true
}

// skipValue reads the value of the member nextName stepped to into r.value.
func (r *objectReader) skipValue() bool {
	s := &r.s
	valueStart := s.i
	if !s.value(r.depth) {
		r.state = orFailed
		return false
	}
	r.value = s.b[valueStart:s.i]
	// A string value is the last string str skipped: plain tells of it.
	r.plainString = s.b[valueStart] == '"' && s.plain
	return true
}

// objectAt returns a reader of the member value nextName stepped to, an object (the
// caller has seen its '{'), one level deeper. Once it has read the object, endNested
// takes r past it.
func (r *objectReader) objectAt() objectReader {
	n := objectReader{s: r.s, depth: r.depth + 1, nested: true}
	if n.depth > maxDepth {
		n.state = orFailed
	}
	n.s.i++ // '{'
	return n
}

// endNested takes r past the object n (objectAt) read, as skipValue would have read it:
// false, r failed, if n was no valid object.
func (r *objectReader) endNested(n *objectReader) bool {
	if !n.ok() {
		r.state = orFailed
		return false
	}
	r.value = r.s.b[r.s.i:n.s.i]
	r.s.i, r.plainString = n.s.i, false
	return true
}

// end closes the object at '}': the input must end there, but for whitespace, unless the
// object is nested.
func (r *objectReader) end() bool {
	r.s.i++
	if r.nested {
		r.state = orDone
		return false
	}
	r.s.ws()
	r.state = orFailed
	if r.s.i == len(r.s.b) {
		r.state = orDone
	}
	return false
}

// ok reports whether the input was exactly one valid object, once next has reported false.
func (r *objectReader) ok() bool { return r.state == orDone }

// eachMember reads b as exactly one JSON object (whitespace around it allowed) and calls
// visit with each member's unescaped name and raw value: EachMember's work.
func eachMember(b []byte, visit func(name, value []byte) bool) bool {
	r := newObjectReader(b)
	for r.next() {
		if !visit(r.name, r.value) {
			return false
		}
	}
	return r.ok()
}

// Valid reports whether b is exactly one JSON value, as json.Valid does, in the scanner's
// one pass: for a client that checks the params it sends on every request.
func Valid(b []byte) bool { return validJSON(b) }

// validJSON is Valid.
func validJSON(b []byte) bool {
	s := scanner{b: b}
	s.ws()
	if !s.value(0) {
		return false
	}
	s.ws()
	return s.i == len(b)
}

// unquoteName returns a member name without its quotes, unescaped when it holds an escape
// (then in a new slice: rare); a name that cannot be unescaped comes back as it is and
// matches nothing.
func unquoteName(quoted []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	if u, err := jsontext.AppendUnquote(nil, quoted); err == nil {
		return u
	}
	return quoted
}
