package mcp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Status is a task status. The zero value is invalid so that a forgotten status is caught.
type Status uint8

const (
	StatusWorking Status = iota + 1
	StatusInputRequired
	StatusCompleted
	StatusFailed
	StatusCancelled
	numStatuses
)

var statusNames = [numStatuses]string{"", "working", "input_required", "completed", "failed", "cancelled"}

// String returns the wire name of s.
func (s Status) String() string {
	if s < numStatuses {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", s)
}

// ParseStatus maps a wire name to a Status; ok is false for an unknown name.
func ParseStatus(name string) (s Status, ok bool) {
	for i := StatusWorking; i < numStatuses; i++ {
		if statusNames[i] == name {
			return i, true
		}
	}
	return 0, false
}

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool { return s >= StatusWorking && s < numStatuses }

// MarshalJSON writes the wire name.
func (s Status) MarshalJSON() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("invalid task status %d", s)
	}
	return AppendString(nil, s.String()), nil
}

// UnmarshalJSON reads a wire name and rejects unknown ones.
func (s *Status) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return fmt.Errorf("task status: %w", err)
	}
	v, ok := ParseStatus(name)
	if !ok {
		return fmt.Errorf("unknown task status %q", name)
	}
	*s = v
	return nil
}

// transitions is the R14 table (docs/RULES.md#state-machine): transitions[from][to] is true when
// a task may move from one status to the other. A status "moving" to itself is a self update
// (new statusMessage, new lastUpdatedAt) and is allowed for non-terminal statuses; terminal
// statuses never change.
//
//	from \ to        working  input_required  completed  failed  cancelled
//	working          self     yes             yes        yes     yes
//	input_required   yes      self            yes        yes     yes
//	completed        no       no              final      no      no
//	failed           no       no              no         final   no
//	cancelled        no       no              no         no      final
var transitions = [numStatuses][numStatuses]bool{
	StatusWorking:       {StatusWorking: true, StatusInputRequired: true, StatusCompleted: true, StatusFailed: true, StatusCancelled: true},
	StatusInputRequired: {StatusWorking: true, StatusInputRequired: true, StatusCompleted: true, StatusFailed: true, StatusCancelled: true},
}

// InitialStatus is the status every new task starts in (R13).
const InitialStatus = StatusWorking

// CanTransition reports whether R14 allows a task observed in from to be observed next in to.
// Observing a terminal status again (from == to, terminal) is a repeat, not a change, and is
// allowed; any change out of a terminal status is not.
func CanTransition(from, to Status) bool {
	if !from.Valid() || !to.Valid() {
		return false
	}
	if from == to {
		return true
	}
	return transitions[from][to]
}

// Task is the 2025-11-25 wire form of a task (docs/RULES.md#task-object). TTL is always sent:
// nil is written as null (unlimited retention, R44).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *Ms    `json:"ttl"`
	PollInterval  *Ms    `json:"pollInterval,omitempty"`
}

// Ms is a count of milliseconds on the wire (ttl, pollInterval). The schema says integer; the
// TypeScript source says number, so reading is lenient about 12000.0 (docs/RULES.md#task-object)
// while writing always emits an integer.
type Ms int64

// UnmarshalJSON accepts integers and finite numbers with a fraction, rounding down.
func (m *Ms) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("milliseconds: %w", err)
	}
	if f < -(1<<53) || f > 1<<53 {
		return fmt.Errorf("milliseconds out of range: %s", b)
	}
	*m = Ms(f)
	return nil
}

// Duration converts m to a time.Duration.
func (m Ms) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// TimeLayout is the RFC 3339 layout tasksim writes: UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t for createdAt and lastUpdatedAt (R42, R43).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads an ISO 8601 / RFC 3339 timestamp, with or without fractional seconds.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Millis returns d in whole milliseconds as the *Ms the wire fields take.
func Millis(d time.Duration) *Ms {
	ms := Ms(d.Milliseconds())
	return &ms
}

// ParseTask reads a Task object as json.Unmarshal into a Task reads it, in one validating
// pass without reflection for a plain object: a client reads one on every poll. Anything
// encoding/json might read differently (a member repeated or named in another case, a
// member of the wrong type) is left to it (FuzzParseTaskMatchesEncodingJSON).
func ParseTask(b []byte) (Task, error) {
	if v := bytes.TrimLeft(b, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return parseTaskStd(b) // not an object: encoding/json says what it is
	}
	var f taskMembers
	r := newObjectReader(b)
	plain, odd := collect(&r, f[:], taskMemberIndex, taskMemberNames[:])
	return f.taskOf(b, plain, odd || !r.ok())
}

// taskOf is ParseTask of b from its members f, collected (plain: collect's); odd leaves b to
// encoding/json, as does a member of the wrong type (for encoding/json's reading and words).
func (f *taskMembers) taskOf(b []byte, plain uint64, odd bool) (Task, error) {
	if odd {
		return parseTaskStd(b)
	}
	t, err := f.task(plain)
	if err != nil {
		return parseTaskStd(b)
	}
	return t, nil
}

// collect reads the members of the object r reads into f, the raw value of each name that
// index knows at its index, and sets bit i of plain when f[i] is a plain string
// (objectReader.plainString). odd says that a member came twice or that a name matched one of
// names only by case: encoding/json reads those its own way. r.ok tells, after, whether the
// object was valid.
func collect(r *objectReader, f [][]byte, index func([]byte) int, names []string) (plain uint64, odd bool) {
	for r.next() {
		i := index(r.name)
		if i < 0 {
			odd = odd || FoldsTo(r.name, names...)
			continue
		}
		odd = odd || f[i] != nil
		f[i] = r.value
		if r.plainString {
			plain |= 1 << i
		}
	}
	return plain, odd
}

// parseTaskStd is ParseTask by encoding/json, for what its single pass leaves to it.
func parseTaskStd(b []byte) (Task, error) {
	var t Task
	err := json.Unmarshal(b, &t)
	return t, err
}

// The members of a Task, by their index in taskMemberNames.
const (
	tmTaskID = iota
	tmStatusMessage
	tmCreatedAt
	tmLastUpdatedAt
	tmStatus
	tmTTL
	tmPollInterval
	numTaskMembers
)

// taskMemberNames are the wire names of Task's members; the four strings come first.
var taskMemberNames = [numTaskMembers]string{"taskId", "statusMessage", "createdAt", "lastUpdatedAt", "status", "ttl", "pollInterval"}

// taskMembers holds the raw values of a Task's members by index; nil = absent.
type taskMembers [numTaskMembers][]byte

// taskMemberIndex returns the index of name in taskMemberNames, -1 for another name.
func taskMemberIndex(name []byte) int {
	switch string(name) { // a switch on strings compiles to a search, not a scan
	case "taskId":
		return tmTaskID
	case "statusMessage":
		return tmStatusMessage
	case "createdAt":
		return tmCreatedAt
	case "lastUpdatedAt":
		return tmLastUpdatedAt
	case "status":
		return tmStatus
	case "ttl":
		return tmTTL
	case "pollInterval":
		return tmPollInterval
	}
	return -1
}

// task reads the members as json.Unmarshal into a Task would (plain marks the plain strings,
// readStrings' known); an error says that one is not
// of its member's type. The plain strings share one allocation (readStrings), and so do the
// two durations: a poll reads a task with two allocations, not seven.
func (f *taskMembers) task(plain uint64) (Task, error) {
	var t Task
	if err := readStrings(f[:tmStatus], plain, []*string{&t.TaskID, &t.StatusMessage, &t.CreatedAt, &t.LastUpdatedAt}); err != nil {
		return t, err
	}
	if v := f[tmStatus]; v != nil {
		if err := t.Status.read(v); err != nil {
			return t, err
		}
	}
	var ms *[2]Ms
	for i, dst := range [...]**Ms{&t.TTL, &t.PollInterval} {
		if v := f[tmTTL+i]; v != nil && string(v) != "null" {
			if ms == nil {
				ms = new([2]Ms)
			}
			var err error
			if *dst, err = readMsInto(v, &ms[i]); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// readStrings reads each raw value of raws that is present into the string dsts names at
// the same index, as readString does; null leaves it alone. The plain strings (no escape,
// valid UTF-8: every string a server normally sends) share one allocation. Bit i of known
// says that raws[i] is a string the scanner found plain (objectReader.plainString).
func readStrings(raws [][]byte, known uint64, dsts []*string) error {
	var plain uint64 // bit i: raws[i] is a plain string
	n := 0
	for i, v := range raws {
		switch {
		case v == nil || string(v) == "null":
		case v[0] != '"':
			return fmt.Errorf("want a string, got %s", clip(v))
		case known&(1<<i) != 0 || plainString(v[1:len(v)-1]):
			plain, n = plain|1<<i, n+len(v)-2
		default:
			var s string // escapes (to encoding/json): declared only on this rare path
			if err := readString(v, &s); err != nil {
				return err
			}
			*dsts[i] = s
		}
	}
	if plain == 0 {
		return nil
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, v := range raws {
		if plain&(1<<i) != 0 {
			sb.Write(v[1 : len(v)-1])
		}
	}
	all, at := sb.String(), 0
	for i, v := range raws {
		if plain&(1<<i) != 0 {
			k := len(v) - 2
			*dsts[i], at = all[at:at+k], at+k
		}
	}
	return nil
}

// plainString reports whether the inside of a JSON string reads as itself: no escape, valid
// UTF-8. ASCII without a backslash, what servers send, is told eight bytes at a time.
func plainString(inner []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(inner); i += 8 {
		x := binary.LittleEndian.Uint64(inner[i:])
		if bs := x ^ (lo * '\\'); (x|(bs-lo)&^bs)&hi != 0 {
			return bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
		}
	}
	for ; i < len(inner); i++ {
		if c := inner[i]; c == '\\' || c >= 0x80 {
			return bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
		}
	}
	return true
}

// readString reads a JSON string into *dst as encoding/json does: null leaves *dst alone,
// another type is an error.
func readString(v []byte, dst *string) error {
	switch {
	case string(v) == "null":
		return nil
	case v[0] != '"':
		return fmt.Errorf("want a string, got %s", clip(v))
	}
	if inner := v[1 : len(v)-1]; plainString(inner) {
		*dst = string(inner)
		return nil
	}
	return json.Unmarshal(v, dst) // escapes, and invalid UTF-8 replaced as encoding/json does
}

// read is UnmarshalJSON without an allocation for the plain wire names.
func (s *Status) read(v []byte) error {
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
		if st, ok := ParseStatus(string(v[1 : len(v)-1])); ok {
			*s = st
			return nil
		}
	}
	return s.UnmarshalJSON(v)
}

// readMs reads a *Ms member: null is nil.
func readMs(v []byte) (*Ms, error) {
	if string(v) == "null" {
		return nil, nil
	}
	return readMsInto(v, new(Ms))
}

// readMsInto reads a *Ms member that is not null into m, which it returns: a plain integer
// of up to 15 digits (exact, and within the bound) without strconv, any other number as
// json.Unmarshal parses it.
func readMsInto(v []byte, m *Ms) (*Ms, error) {
	if len(v) > 0 && len(v) <= 15 {
		n := Ms(0)
		for _, c := range v {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + Ms(c-'0')
		}
		if n >= 0 {
			*m = n
			return m, nil
		}
	}
	if c := v[0]; c == '-' || ('0' <= c && c <= '9') { // a number: json.Unmarshal's parse
		f, err := strconv.ParseFloat(string(v), 64)
		if err == nil && f >= -(1<<53) && f <= 1<<53 {
			*m = Ms(f)
			return m, nil
		}
	}
	if err := m.UnmarshalJSON(v); err != nil { // the error, as UnmarshalJSON words it
		return nil, err
	}
	return m, nil
}
