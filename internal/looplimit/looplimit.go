// Package looplimit measures the loopback HTTP ceiling of the machine: a minimal HTTP server
// and client pair, the replica of a benchmark the project's machines keep beside the
// repository (same server, reply bytes, request bytes and transport settings), so that
// benchmarks measure the ceiling in the same run as tasksim and quote ratios, without
// reading files outside the module at test time.
//
// It is benchmark support only: production code must not import it.
package looplimit

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
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

// Compare measures ours against ceiling in one benchmark run: b.N requests to each, in pairs
// of rounds of about 4*Conc requests per side, the side that goes first alternating, so
// that neither always runs first. Each pair yields ceiling time / ours time for the same
// number of requests; "ratio" is the median over pairs, so a burst of load from other
// processes, which lands in a few rounds, does not move it. It also reports req/s and
// looplimit-req/s over all rounds, and allocs/req and looplimit-allocs/req (client and
// server together, as they share the process). Warm both sides before calling it.
func Compare(b *testing.B, ours, ceiling func() error) {
	CompareWith(b, ours, ceiling, "looplimit")
}

// CompareWith is Compare against another reference than the ceiling, named ref in the
// metrics: ref-req/s, ref-allocs/req; "ratio" is then ours' throughput over ref's.
func CompareWith(b *testing.B, ours, ceiling func() error, ref string) {
	const pairRound = 4 * Conc
	pairs := max(1, b.N/pairRound)
	sides := [2]func() error{ours, ceiling}
	names := [2]string{"ours", ref}
	var (
		took   [2]time.Duration
		allocs [2]uint64
		ratios = make([]float64, 0, pairs)
		ms     runtime.MemStats
	)
	b.ResetTimer()
	for p := range pairs {
		k := b.N / pairs
		if p < b.N%pairs {
			k++
		}
		var d [2]time.Duration
		for i := range 2 {
			side := (p + i) % 2
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			dt, err := Round(k, sides[side])
			runtime.ReadMemStats(&ms)
			if err != nil {
				b.Fatalf("%s: %v", names[side], err)
			}
			d[side] = dt
			took[side] += dt
			allocs[side] += ms.Mallocs - before
		}
		if d[0] > 0 {
			ratios = append(ratios, d[1].Seconds()/d[0].Seconds())
		}
	}
	b.StopTimer()
	if took[0] == 0 || took[1] == 0 || len(ratios) == 0 {
		return
	}
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		median = (ratios[len(ratios)/2-1] + median) / 2
	}
	b.ReportMetric(median, "ratio")
	b.ReportMetric(float64(b.N)/took[0].Seconds(), "req/s")
	b.ReportMetric(float64(b.N)/took[1].Seconds(), ref+"-req/s")
	b.ReportMetric(float64(allocs[0])/float64(b.N), "allocs/req")
	b.ReportMetric(float64(allocs[1])/float64(b.N), ref+"-allocs/req")
}
