package client

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// remotes is a handler that records the remote address of every request, in order.
type remotes struct {
	mu    sync.Mutex
	hosts []string
}

func (rs *remotes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	rs.mu.Lock()
	rs.hosts = append(rs.hosts, host)
	rs.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (rs *remotes) seen() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.hosts)
}

var threeSources = []netip.Addr{
	netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3"),
}

// get sends n requests one after another; with no idle connection kept, each dials anew.
func get(t *testing.T, c *http.Client, url string, n int) {
	t.Helper()
	for range n {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestSourceAddrsRoundRobin: each new connection of the lean transport comes from the next
// source address, in order, as the server sees it.
func TestSourceAddrsRoundRobin(t *testing.T) {
	rs := &remotes{}
	srv := httptest.NewServer(rs)
	defer srv.Close()
	c := NewHTTPClientWith(ClientOptions{IdleConns: 0, SourceAddrs: threeSources}) // no pool: a dial per request
	defer c.CloseIdleConnections()
	get(t, c, srv.URL, 6)
	want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1", "127.0.0.2", "127.0.0.3"}
	if got := rs.seen(); !slices.Equal(got, want) {
		t.Errorf("the server saw requests from %v, want %v", got, want)
	}
}

// TestSourceAddrsKeepAlive: a pooled connection keeps its source; only new dials move on.
func TestSourceAddrsKeepAlive(t *testing.T) {
	rs := &remotes{}
	srv := httptest.NewServer(rs)
	defer srv.Close()
	c := NewHTTPClientWith(ClientOptions{IdleConns: 4, SourceAddrs: threeSources[1:]})
	defer c.CloseIdleConnections()
	get(t, c, srv.URL, 3)
	if got, want := rs.seen(), []string{"127.0.0.2", "127.0.0.2", "127.0.0.2"}; !slices.Equal(got, want) {
		t.Errorf("the server saw %v, want %v (one connection, reused)", got, want)
	}
}

// TestSourceAddrsHTTPS: net/http's transport, for https:// targets, dials from the sources
// too.
func TestSourceAddrsHTTPS(t *testing.T) {
	rs := &remotes{}
	srv := httptest.NewTLSServer(rs)
	defer srv.Close()
	c := NewHTTPClientWith(ClientOptions{SourceAddrs: threeSources})
	tr := c.Transport.(*schemeTransport).other
	tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	tr.DisableKeepAlives = true
	get(t, c, srv.URL, 4)
	want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1"}
	if got := rs.seen(); !slices.Equal(got, want) {
		t.Errorf("the server saw %v, want %v", got, want)
	}
}
