package client

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestValidValue holds the eight-bytes-at-a-time check to its definition: no control byte
// but tab, no DEL, at every position around the word boundary.
func TestValidValue(t *testing.T) {
	for n := range 20 {
		for _, c := range []byte{'\t', '\r', '\n', 0, 0x1f, 0x7f, 0x80, 'a', ' '} {
			for at := range n {
				b := []byte(strings.Repeat("v", n))
				b[at] = c
				want := !((c < ' ' && c != '\t') || c == 0x7f)
				if got := validValue(string(b)); got != want {
					t.Fatalf("validValue(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// TestWriteHeadAllocs guards the cost of writing a session's POST head: nothing allocated,
// every header line appended in the writer's buffer.
func TestWriteHeadAllocs(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/mcp")
	req := &http.Request{Method: http.MethodPost, URL: u, Host: u.Host, ContentLength: 120, Header: http.Header{
		"Accept": acceptBoth, "Content-Type": contentJSON, "Mcp-Session-Id": {"7f3c9a1e2b4d6f80a1b2c3d4e5f60718"},
		"Mcp-Protocol-Version": {"2025-11-25"}}}
	bw := bufio.NewWriterSize(io.Discard, 4096)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := writeHead(bw, req, true, nil); err != nil {
			t.Fatal(err)
		}
		bw.Reset(io.Discard)
	}); n != 0 {
		t.Errorf("writeHead: %v allocations, want 0", n)
	}
}

// TestNewPostAllocs guards the allocations of building a session's POST: the request (its
// copy by WithContext) and its body, which is its own GetBody maker.
func TestNewPostAllocs(t *testing.T) {
	tg := &Target{URL: "http://127.0.0.1:8080/mcp"}
	tg.CacheEndpoint()
	s := &Session{t: tg}
	s.postHdr = s.postHeader()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}`)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = s.newPost(ctx, body) }); n > 3 {
		t.Errorf("newPost: %v allocations, want at most 3 (the request, its body, GetBody)", n)
	}
	req, _ := s.newPost(ctx, body)
	for range 2 { // the body, then the one GetBody makes, read the same bytes
		got, _ := io.ReadAll(req.Body)
		if string(got) != string(body) {
			t.Fatalf("body %q", got)
		}
		req.Body, _ = req.GetBody()
	}
}

// TestParseLength holds parseLength to strconv.ParseInt(s, 10, 64), which it stands in for
// on every reply: the same value and the same failure for each.
func TestParseLength(t *testing.T) {
	for _, s := range []string{"0", "212", "0123", "", "+5", "-1", " 5", "5 ", "1e3", "999999999999999999",
		"9223372036854775807", "9223372036854775808", "123456789012345678901"} {
		n, err := parseLength(s)
		wn, werr := strconv.ParseInt(s, 10, 64)
		if n != wn || (err == nil) != (werr == nil) {
			t.Errorf("parseLength(%q) = %d, %v; ParseInt: %d, %v", s, n, err, wn, werr)
		}
	}
}
