// Package looplimit is an in-repo replica of ../shared/bench/looplimit, the loopback HTTP
// ceiling of the machine: the same server, reply bytes, request bytes and transport
// settings, so that benchmarks can measure the ceiling in the same run as tasksim and quote
// ratios, without reading files outside the module at test time.
//
// It is benchmark support only: production code must not import it.
package looplimit

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Conc is the number of concurrent requesters, looplimit's default -c.
const Conc = 256

const (
	reply = `{"jsonrpc":"2.0","id":1,"result":{"taskId":"5b9f0c2e8d7a4e31a1c4f0d2b6e8a913","status":"working","createdAt":"2026-01-05T09:00:00.000Z","lastUpdatedAt":"2026-01-05T09:00:00.000Z","ttl":60000,"pollInterval":1000}}`
	body  = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"5b9f0c2e8d7a4e31a1c4f0d2b6e8a913"}}`
)

// Body returns looplimit's request body (a tasks/get), byte for byte.
func Body() []byte { return []byte(body) }

// Start starts looplimit's server on 127.0.0.1:0 and returns its URL and a stop function.
func Start() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("looplimit: listen: %w", err)
	}
	rb := []byte(reply)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(rb)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { _ = srv.Close() }, nil
}

// Client is looplimit's client: one keep-alive pool of Conc connections, each request
// POSTing the same bytes and draining the reply into io.Discard. Header is added to every
// request (a session's headers, when the server is tasksim's).
type Client struct {
	http   *http.Client
	URL    string
	Body   []byte
	Header http.Header
}

// NewClient returns a client for url sending body.
func NewClient(url string, body []byte, header http.Header) *Client {
	tr := &http.Transport{MaxIdleConnsPerHost: Conc, MaxConnsPerHost: Conc}
	return &Client{http: &http.Client{Transport: tr}, URL: url, Body: body, Header: header}
}

// Do sends one request, as looplimit does, and checks that it got a 200.
func (c *Client) Do() error {
	req, err := http.NewRequest(http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.Header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Round runs do n times from min(n, Conc) workers and returns the wall time it took. The
// first failure stops every worker.
func Round(n int, do func() error) (time.Duration, error) {
	var (
		left     atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	left.Store(int64(n))
	start := time.Now()
	for range min(n, Conc) {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := do(); err != nil {
					errOnce.Do(func() { firstErr = err })
					left.Store(0)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}
