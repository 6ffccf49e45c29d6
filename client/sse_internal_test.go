package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tasksim/tasksim/internal/mcp"
)

// sseEvents reads every message event of stream with an sseReader over r(stream), the
// retry it saw, and the error that ended it.
func sseEvents(stream string, limit int, r func(io.Reader) io.Reader) (events []string, retry int64, err error) {
	sr := newSSEReader(bufio.NewReaderSize(r(strings.NewReader(stream)), 16), limit)
	for {
		data, err := sr.next()
		if err != nil {
			return events, sr.retry, err
		}
		events = append(events, string(data))
	}
}

// readers are the ways a body may arrive: whole, a byte at a time, in halves.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"halves":   iotest.HalfReader,
}

// TestSSEFramings: the event-stream rules, one framing per case, each read whole, a byte at
// a time and in halves (a 16-byte bufio buffer, so that most lines span several fills).
func TestSSEFramings(t *testing.T) {
	long := strings.Repeat("x", 100_000) // far beyond any buffer
	cases := []struct {
		name   string
		stream string
		want   []string
		retry  int64
		err    error
	}{
		{name: "LF", stream: "data: {\"a\":1}\n\n", want: []string{`{"a":1}`}, retry: -1},
		{name: "CRLF", stream: "data: {\"a\":1}\r\n\r\n", want: []string{`{"a":1}`}, retry: -1},
		{name: "CR", stream: "data: {\"a\":1}\r\r", want: []string{`{"a":1}`}, retry: -1},
		{name: "mixed line ends", stream: "event: message\rdata: 1\r\ndata: 2\n\r\ndata: 3\r\r", want: []string{"1\n2", "3"}, retry: -1},
		{name: "several data lines joined with LF", stream: "data: {\"a\":\ndata: 1}\n\n", want: []string{"{\"a\":\n1}"}, retry: -1},
		{name: "no space after the colon", stream: "data:{}\n\n", want: []string{"{}"}, retry: -1},
		{name: "only one space dropped", stream: "data:  x\n\n", want: []string{" x"}, retry: -1},
		{name: "comments", stream: ": keep-alive\n:\ndata: 1\n: between\n\n", want: []string{"1"}, retry: -1},
		{name: "event, id and retry fields", stream: "event: message\nid: 7\nretry: 1500\ndata: 1\n\n", want: []string{"1"}, retry: 1500},
		{name: "priming event: empty data", stream: "id: 0\nretry: 250\ndata:\n\ndata: 1\n\n", want: []string{"", "1"}, retry: 250},
		{name: "a field without colon", stream: "data\ndata\n\n", want: []string{"\n"}, retry: -1},
		{name: "blank lines alone dispatch nothing", stream: "\n\n\r\n\rdata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "an event of another type is skipped", stream: "event: ping\ndata: x\n\ndata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "the type is reset after each event", stream: "event: ping\ndata: x\n\nevent: message\ndata: 1\n\ndata: 2\n\n", want: []string{"1", "2"}, retry: -1},
		{name: "leading BOM", stream: "\ufeffdata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "a BOM later is data", stream: "data: 1\n\n\ufeffdata: 2\n\n", want: []string{"1"}, retry: -1},
		{name: "retry not all digits is ignored", stream: "retry: 10s\nretry: -1\nretry: 1 0\ndata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "id fields are skipped", stream: "id: a\x00b\nid: 7\ndata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "unknown fields are ignored", stream: "foo: bar\ndata: 1\n\n", want: []string{"1"}, retry: -1},
		{name: "unfinished event at the end is dropped", stream: "data: 1\n\ndata: 2\n", want: []string{"1"}, retry: -1},
		{name: "unfinished line at the end is dropped", stream: "data: 1\n\ndata: 2", want: []string{"1"}, retry: -1},
		{name: "a line of 100 KB", stream: "data: " + long + "\n\n", want: []string{long}, retry: -1},
		{name: "a line of 100 KB in CR framing", stream: "data: " + long + "\r\rdata: 2\r\r", want: []string{long, "2"}, retry: -1},
		{name: "a line beyond the bound", stream: "data: " + strings.Repeat("x", 300) + "\n\n", retry: -1, err: errSSETooLong},
		{name: "an event beyond the bound", stream: strings.Repeat("data: "+strings.Repeat("x", 60)+"\n", 5) + "\n", retry: -1, err: errSSETooLong},
		{name: "a comment beyond the bound", stream: ":" + strings.Repeat("x", 300) + "\ndata: 1\n\n", retry: -1, err: errSSETooLong},
	}
	for _, tc := range cases {
		limit := 1 << 20
		if tc.err != nil {
			limit = 256
		}
		for rname, r := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got, retry, err := sseEvents(tc.stream, limit, r)
				want := tc.err
				if want == nil {
					want = io.EOF
				}
				if !errors.Is(err, want) {
					t.Fatalf("ended with %v, want %v", err, want)
				}
				if tc.err != nil {
					return
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
					t.Errorf("events %q, want %q", got, tc.want)
				}
				if retry != tc.retry {
					t.Errorf("retry %d, want %d", retry, tc.retry)
				}
			})
		}
	}
}

// FuzzSSEReader compares the reader with a plain reading of the rules on the whole stream:
// split into lines at CRLF, LF or CR, then fields, then events.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: 1\n\n", "\ufeffdata: a\r\ndata: b\r\n\r\n", "event: x\rdata: 1\r\rdata:2\n\n",
		": c\nid: 1\nretry: 5\ndata\n\n", "data: 1\r", "\r\n\r\n", "data:\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		for rname, r := range readers {
			got, retry, err := sseEvents(stream, 1<<20, r)
			if err != io.EOF {
				t.Fatalf("%s: ended with %v", rname, err)
			}
			want, wantRetry := referenceSSE(stream)
			if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") || len(got) != len(want) {
				t.Fatalf("%s: events %q, want %q", rname, got, want)
			}
			if retry != wantRetry {
				t.Fatalf("%s: retry %d, want %d", rname, retry, wantRetry)
			}
		}
	})
}

var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// referenceSSE reads stream by the rules, whole and simply.
func referenceSSE(stream string) (events []string, retry int64) {
	stream = strings.TrimPrefix(stream, "\ufeff")
	lines := lineEnd.Split(stream, -1)
	lines = lines[:len(lines)-1] // what follows the last line end is no line
	retry = -1
	var data bytes.Buffer
	typ := ""
	for _, line := range lines {
		if line == "" {
			if data.Len() > 0 && (typ == "" || typ == "message") {
				events = append(events, strings.TrimSuffix(data.String(), "\n"))
			}
			data.Reset()
			typ = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "data":
			data.WriteString(value + "\n")
		case "event":
			typ = value
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if n, err := strconv.ParseInt(value, 10, 64); err == nil {
					retry = n
				}
			}
		}
	}
	return events, retry
}

// TestSSECapturedReplies reads replies captured from real TypeScript SDK servers
// (testdata/sse, see its README: the official everything server and a task server of our
// own on @modelcontextprotocol/sdk) with the SSE reader, as sent and re-framed with CRLF
// and lone CR line ends, read whole and a byte at a time: every message event decodes as
// JSON-RPC, and a reply to a request ends with a response. The tools/list of the everything
// server is one data line of about 8 KB; the 200 KB result one of 200 KB.
func TestSSECapturedReplies(t *testing.T) {
	files, err := filepath.Glob("testdata/sse/*.sse")
	if err != nil || len(files) < 20 {
		t.Fatalf("captures: %d files, %v; want the captured replies of testdata/sse", len(files), err)
	}
	longest := map[string]int{"everything-tools-list.sse": 6000, "sdk-tasks-tasks-result-200k.sse": 200_000}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		framings := map[string]string{
			"as sent": string(raw),
			"CRLF":    strings.ReplaceAll(string(raw), "\n", "\r\n"),
			"CR":      strings.ReplaceAll(string(raw), "\n", "\r"),
		}
		for fname, stream := range framings {
			for rname, r := range map[string]func(io.Reader) io.Reader{"whole": readers["whole"], "one byte": readers["one byte"]} {
				events, _, err := sseEvents(stream, maxReply, r)
				if err != io.EOF {
					t.Fatalf("%s (%s, %s): ended with %v", name, fname, rname, err)
				}
				var last mcp.Message
				longestEvent := 0
				for _, data := range events {
					if data == "" {
						continue // a priming event
					}
					msg, perr := mcp.Decode([]byte(data))
					if perr != nil {
						t.Fatalf("%s (%s, %s): %s: %.80s", name, fname, rname, perr.Message, data)
					}
					last, longestEvent = msg, max(longestEvent, len(data))
				}
				isReply := !strings.HasSuffix(name, "-get-stream.sse")
				if isReply && last.Kind != mcp.KindResult && last.Kind != mcp.KindError {
					t.Errorf("%s (%s, %s): the last message is not a response", name, fname, rname)
				}
				if longestEvent < longest[name] {
					t.Errorf("%s: longest event %d bytes, want at least %d", name, longestEvent, longest[name])
				}
			}
		}
	}
}
