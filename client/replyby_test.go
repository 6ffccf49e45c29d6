package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestReplyByStalledServer holds a request under ReplyBy to its deadline on the lean
// transport (its connection's I/O deadline) and on net/http's (a context deadline given by
// Target.send): a stalled head and a stalled body both fail with context.DeadlineExceeded,
// and the context the deadline was put on is not ended by it.
func TestReplyByStalledServer(t *testing.T) {
	release := make(chan struct{})
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "10")
			_, _ = io.WriteString(w, "12345")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	for _, tc := range []struct {
		name string
		c    *http.Client
	}{
		{"lean", h1Client(t)},
		{"net-http", &http.Client{Transport: &http.Transport{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{URL: s.URL, Client: tc.c}
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			post := func(path string) *http.Request {
				ctx := ReplyBy(parent, time.Now().Add(20*time.Millisecond))
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, bytes.NewReader([]byte("{}")))
				return req
			}
			if _, err := tg.send(post("/head")); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stalled head: %v, want context.DeadlineExceeded", err)
			}
			resp, err := tg.send(post("/body"))
			if err != nil {
				t.Fatalf("the head came: %v", err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "12345" || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stalled body: %q, %v; want 12345 and context.DeadlineExceeded", b, err)
			}
			if parent.Err() != nil {
				t.Errorf("the parent context ended: %v", parent.Err())
			}
		})
	}
}

// TestH1RoundTripAllocs guards the cost of a request on a reused connection under a
// cancellable context with a reply deadline, as a virtual client sends each: the watch of
// the context is registered once for the connection, not once per request, and the
// deadline is the connection's (ReplyBy), so the round trip allocates only its request, its
// reply (the response, body and header values in one object, and the header map) and the
// reply deadline's context: no timer, no context and no watch of its own. The server is a raw loopback socket that allocates nothing per request.
func TestH1RoundTripAllocs(t *testing.T) {
	url := rawReplier(t, []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"))
	tr := newH1Transport(4)
	t.Cleanup(tr.CloseIdleConnections)
	tg := &Target{URL: url, Client: &http.Client{Transport: tr}}
	tg.CacheEndpoint()
	s := &Session{t: tg}
	s.postHdr = s.postHeader()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}`)
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	buf := make([]byte, 64)
	trip := func() {
		req, err := s.newPost(ReplyBy(parent, time.Now().Add(time.Minute)), body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tg.send(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := readAll(buf[:0], resp.Body, len(buf)); string(b) != "{}" {
			t.Fatalf("reply %q", b)
		}
		resp.Body.Close()
	}
	trip() // dial, and register the watch
	// 3 for newPost (TestNewPostAllocs), 3 for the reply (h1Reply, the map and its group),
	// 1 for ReplyBy. Under context.WithTimeout the same round trip allocates 16: the timer
	// context, its timer, and a new watch of a new context for every request.
	if n := testing.AllocsPerRun(200, trip); n > 7 {
		t.Errorf("round trip: %v allocations, want at most 7", n)
	}
}

// rawReplier serves on a loopback socket: it answers each request (a head and a body of
// its Content-Length) with reply, allocating nothing per request. It returns the URL.
func rawReplier(t *testing.T, reply []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go serveRaw(nc, reply)
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp"
}

// serveRaw answers the requests on nc with reply until nc fails.
func serveRaw(nc net.Conn, reply []byte) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 4096)
	skip := make([]byte, 4096)
	for {
		n := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
			if k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
				n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if _, err := io.ReadFull(br, skip[:n]); err != nil {
			return
		}
		if _, err := nc.Write(reply); err != nil {
			return
		}
	}
}
