package client

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
)

// sseReader reads a text/event-stream body by the event-stream rules of the HTML Living
// Standard (server-sent events, "Interpreting an event stream"), which is what Streamable
// HTTP replies use (docs/RULES.md#h4):
//
//   - a UTF-8 byte order mark at the very start is skipped;
//   - lines end with CRLF, LF or a lone CR, and may be of any length up to limit;
//   - a line starting with ':' is a comment; "field: value" drops one space after the
//     colon; a line without a colon is a field with an empty value;
//   - data lines append their value and a LF to the event's data; event sets its type;
//     retry sets the reconnection delay when it is all ASCII digits; id and other fields
//     are ignored (tasksim does not resume streams with Last-Event-ID);
//   - a blank line dispatches the event: nothing when its data is empty, else the data
//     without its last LF. At the end of the stream an unfinished event is discarded.
//
// Only events of type "message" (or with no type) carry JSON-RPC messages; next skips the
// others. The reader allocates nothing per event beyond growing its buffers to the largest
// line and event seen.
type sseReader struct {
	r      *bufio.Reader
	limit  int    // bound of one line and of one event's data, in bytes
	line   []byte // a line longer than the bufio buffer, assembled
	data   []byte // the data of the event being read
	event  []byte // its type; empty = "message"
	retry  int64  // the latest retry field, in ms; -1 = none seen
	skipLF bool   // the last line ended with CR: a LF right after it belongs to it
	begun  bool   // the byte order mark check is done
}

// errSSETooLong is a line or an event beyond the reader's limit.
var errSSETooLong = errors.New("SSE line or event exceeds the reply bound")

func newSSEReader(r *bufio.Reader, limit int) *sseReader {
	return &sseReader{r: r, limit: limit, retry: -1}
}

// next returns the data of the next message event, which may be empty (a "data:" line with
// no value, as in the priming event of docs/RULES.md#h5). The slice is valid until the next
// call.
// At the end of the stream it returns io.EOF (an unfinished event is dropped, as the rules
// say); errSSETooLong when a line or an event's data exceeds the limit.
func (s *sseReader) next() ([]byte, error) {
	s.data, s.event = s.data[:0], s.event[:0]
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 { // dispatch
			if len(s.data) == 0 || !isMessageEvent(s.event) {
				s.data, s.event = s.data[:0], s.event[:0]
				continue
			}
			return s.data[:len(s.data)-1], nil // without the last LF
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) { // compiled without an allocation
		case "data":
			if len(s.data)+len(value)+1 > s.limit {
				return nil, errSSETooLong
			}
			s.data = append(append(s.data, value...), '\n')
		case "event":
			s.event = append(s.event[:0], value...)
		case "retry":
			if ms, ok := asciiDigits(value); ok {
				s.retry = ms
			}
		}
	}
}

// isMessageEvent reports whether an event type names a message event.
func isMessageEvent(typ []byte) bool { return len(typ) == 0 || string(typ) == "message" }

// asciiDigits parses a retry value: one or more ASCII digits, nothing else.
func asciiDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// readLine returns the next line without its end. The slice is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err // a last line without its end is dropped with its event
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		if !s.begun {
			s.begun = true
			if bytes.HasPrefix(buf, bom) {
				_, _ = s.r.Discard(len(bom))
				continue
			} else if len(buf) < len(bom) && bytes.HasPrefix(bom, buf) {
				// Too few bytes buffered to tell: look again with more.
				if b, err := s.r.Peek(len(bom)); err == nil && bytes.Equal(b, bom) {
					_, _ = s.r.Discard(len(bom))
					continue
				}
				buf, _ = s.r.Peek(s.r.Buffered())
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(s.line)+len(buf) > s.limit {
				return nil, errSSETooLong
			}
			s.line = append(s.line, buf...)
			_, _ = s.r.Discard(len(buf))
			continue
		}
		if len(s.line)+i > s.limit {
			return nil, errSSETooLong
		}
		s.skipLF = buf[i] == '\r'
		var line []byte
		if len(s.line) == 0 {
			line = buf[:i] // in the bufio buffer: valid until its next fill
		} else {
			s.line = append(s.line, buf[:i]...)
			line = s.line
		}
		_, _ = s.r.Discard(i + 1)
		return line, nil
	}
}

// bom is the UTF-8 byte order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}
