package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// A client that reads any conforming server: replies as application/json or as an SSE
// stream, with or without Content-Length (chunked), up to the reply bound, over http:// and
// https://; tools/list followed page by page; errors that say what happened.

// peer is a minimal MCP endpoint for client tests: initialize, notifications, tools/list in
// pages of one tool, and tools/call of "echo" answering a result whose text is size bytes,
// framed as the test says.
type peer struct {
	sse     bool // reply as an SSE stream (else application/json)
	chunked bool // no Content-Length: the body goes out in flushed pieces
	pages   int  // tools/list pages (one tool each); the last has no nextCursor
	loop    bool // the last page's nextCursor points back to the first
}

func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	msg, perr := mcp.Decode(body)
	if perr != nil || msg.Kind == mcp.KindNotification || msg.Kind == mcp.KindResult {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result []byte
	switch msg.Method {
	case mcp.MethodInitialize:
		result = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"peer","version":"1"}}`)
		w.Header().Set("Mcp-Session-Id", "s-1")
	case mcp.MethodToolsList:
		var params struct{ Cursor string }
		_ = json.Unmarshal(msg.Params, &params)
		page, _ := strconv.Atoi(strings.TrimPrefix(params.Cursor, "page-"))
		next := ""
		if page+1 < p.pages {
			next = fmt.Sprintf(`,"nextCursor":"page-%d"`, page+1)
		} else if p.loop {
			next = `,"nextCursor":"page-0"`
		}
		result = fmt.Appendf(nil, `{"tools":[{"name":"tool-%d","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]%s}`, page, next)
	case mcp.MethodToolsCall:
		var params struct {
			Arguments struct{ Size int } `json:"arguments"`
		}
		_ = json.Unmarshal(msg.Params, &params)
		result = fmt.Appendf(nil, `{"content":[{"type":"text","text":%q}]}`, strings.Repeat("x", params.Arguments.Size))
	default:
		result = nil
	}
	var reply []byte
	if result == nil {
		reply = mcp.AppendError(nil, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "no %s here", msg.Method))
	} else {
		reply = mcp.AppendResult(nil, msg.ID, result)
	}
	if p.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		reply = append(append([]byte("event: message\nid: 1\ndata: "), reply...), "\n\n"...)
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if !p.chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		_, _ = w.Write(reply)
		return
	}
	for len(reply) > 0 { // flushed pieces: net/http sends them as chunks
		n := min(len(reply), 7919)
		_, _ = w.Write(reply[:n])
		w.(http.Flusher).Flush()
		reply = reply[n:]
	}
}

// peerTarget serves p on 127.0.0.1, over TLS when tls is set, and returns a target for it.
func peerTarget(t *testing.T, p *peer, useTLS bool) *Target {
	t.Helper()
	hc := NewHTTPClient(4)
	var srv *httptest.Server
	if useTLS {
		srv = httptest.NewTLSServer(p)
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		hc.Transport.(*schemeTransport).other.TLSClientConfig = &tls.Config{RootCAs: pool}
	} else {
		srv = httptest.NewServer(p)
	}
	t.Cleanup(srv.Close)
	t.Cleanup(hc.CloseIdleConnections)
	return &Target{URL: srv.URL + "/mcp", Client: hc, Header: http.Header{}, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}
}

// TestRepliesOfEveryFraming: tools/call results of 10 B to the reply bound, as JSON or SSE,
// with Content-Length or chunked, over http:// (the lean transport) and https:// (net/http),
// arrive whole; a reply over the bound (a text of the bound itself, in its envelope) is refused
// with a message that says so.
func TestRepliesOfEveryFraming(t *testing.T) {
	// The largest text whose reply stays within maxReply: the JSON-RPC envelope and the
	// result object around it take less than 200 bytes.
	largest := maxReply - 200
	for _, scheme := range []string{"http", "https"} {
		for _, sse := range []bool{false, true} {
			for _, chunked := range []bool{false, true} {
				name := fmt.Sprintf("%s/sse=%v/chunked=%v", scheme, sse, chunked)
				t.Run(name, func(t *testing.T) {
					tg := peerTarget(t, &peer{sse: sse, chunked: chunked, pages: 1}, scheme == "https")
					ctx := context.Background()
					s, err := tg.Connect(ctx, clientCaps)
					if err != nil {
						t.Fatal(err)
					}
					for _, size := range []int{10, 8000, 200_000, largest} {
						rep, err := s.Call(ctx, mcp.MethodToolsCall, fmt.Appendf(nil, `{"name":"echo","arguments":{"size":%d}}`, size), nil)
						if err != nil || rep.Err != nil {
							t.Fatalf("%d bytes: %v %v", size, err, rep.Err)
						}
						var res mcp.CallToolResult
						if err := json.Unmarshal(rep.Result, &res); err != nil || len(res.Content) != 1 {
							t.Fatalf("%d bytes: result %v, %d content items", size, err, len(res.Content))
						}
						if got := len(res.Content[0].Text); got != size {
							t.Fatalf("%d bytes sent, %d read", size, got)
						}
					}
					_, err = s.Call(ctx, mcp.MethodToolsCall, fmt.Appendf(nil, `{"name":"echo","arguments":{"size":%d}}`, maxReply), nil)
					var pe *ProtocolError
					if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than the reply bound (16 MiB)") {
						t.Errorf("a reply beyond the bound: %v, want a protocol error naming the bound", err)
					}
				})
			}
		}
	}
}

// TestListToolsPages: tools/list is followed over every page; a cursor that comes back is
// a loop, reported instead of followed.
func TestListToolsPages(t *testing.T) {
	for _, sse := range []bool{false, true} {
		tg := peerTarget(t, &peer{sse: sse, pages: 5}, false)
		m, err := Probe(context.Background(), tg, "")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range m.Tools {
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); got != "tool-0,tool-1,tool-2,tool-3,tool-4" {
			t.Errorf("sse=%v: tools %s, want the five of five pages", sse, got)
		}
	}
	tg := peerTarget(t, &peer{pages: 3, loop: true}, false)
	_, err := Probe(context.Background(), tg, "")
	if err == nil || !strings.Contains(err.Error(), `tools/list page 4: protocol error: nextCursor "page-1" was already sent`) {
		t.Errorf("looping pages: %v", err)
	}
}

// TestConnectErrorsSayWhatHappened: a failed initialize says whether the target could not be
// reached, is not an MCP endpoint, refused the credentials (naming the headers sent, never
// their values) or refused the request; an HTML page is never shown.
func TestConnectErrorsSayWhatHappened(t *testing.T) {
	const secret = "Bearer s3cr3t-t0ken"
	html := "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1>" + strings.Repeat("<p>filler</p>", 50) + "</body></html>"
	cases := []struct {
		name     string
		status   int
		ctype    string
		body     string
		want     string
		wantNot  string
		unreachd bool
		https    bool // the URL says https://, the server speaks plain HTTP
	}{
		{name: "501 plain text", status: 501, ctype: "text/plain", body: "Not Implemented\n",
			want: "is not an MCP endpoint: HTTP 501 Not Implemented: Not Implemented"},
		{name: "404 HTML page", status: 404, ctype: "text/html; charset=utf-8", body: html,
			want: "is not an MCP endpoint: HTTP 404 Not Found (an HTML page)", wantNot: "nginx"},
		{name: "405", status: 405, want: "is not an MCP endpoint: HTTP 405 Method Not Allowed"},
		{name: "200 HTML page", status: 200, ctype: "text/html", body: html,
			want: "is not an MCP endpoint: protocol error: initialize reply is an HTML page (text/html), not JSON-RPC", wantNot: "nginx"},
		{name: "200 not JSON-RPC", status: 200, ctype: "text/plain", body: "hello",
			want: "is not an MCP endpoint: protocol error: initialize reply: ", wantNot: "hello"},
		{name: "401 names the header, not its value", status: 401, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"invalid token"}}`,
			want: "refused the client's credentials: HTTP 401 Unauthorized: JSON-RPC error -32001: invalid token (headers sent: Authorization)", wantNot: "s3cr3t"},
		{name: "400 with a JSON-RPC error", status: 400, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Unsupported protocol version"}}`,
			want: "refused initialize: HTTP 400 Bad Request: JSON-RPC error -32600: Bad Request: Unsupported protocol version"},
		{name: "502 from a proxy", status: 502, ctype: "text/html", body: html,
			want: "refused initialize: HTTP 502 Bad Gateway (an HTML page)", wantNot: "nginx"},
		{name: "unreachable", unreachd: true, want: "cannot reach target http://127.0.0.1:"},
		{name: "https to a plain HTTP port", https: true, status: 200, want: "(the target answered plain HTTP: is it http://?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			url := srv.URL + "/mcp"
			if tc.https {
				url = strings.Replace(url, "http://", "https://", 1)
			}
			if tc.unreachd {
				srv.Close()
			}
			hc := NewHTTPClient(2)
			defer hc.CloseIdleConnections()
			tg := &Target{URL: url, Client: hc, Header: http.Header{"Authorization": {secret}}}
			_, err := Probe(context.Background(), tg, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") || tc.wantNot != "" && strings.Contains(err.Error(), tc.wantNot) {
				t.Errorf("error %q shows what it must not", err)
			}
		})
	}
}

// TestVersionMismatch: an initialize answered with a version tasksim does not speak says
// so, rather than calling the target unreachable or no MCP endpoint.
func TestVersionMismatch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, _ := mcp.Decode(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mcp.AppendResult(nil, msg.ID, []byte(`{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"1"}}`)))
	}))
	defer srv.Close()
	hc := NewHTTPClient(2)
	defer hc.CloseIdleConnections()
	_, err := Probe(context.Background(), &Target{URL: srv.URL, Client: hc}, "")
	var ve *VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), `protocol version "1999-01-01", which tasksim does not speak`) {
		t.Errorf("error %v, want a VersionError", err)
	}
}
