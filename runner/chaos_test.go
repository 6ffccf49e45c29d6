package runner

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// TestChaosStart: the proxied URL is the target's with the proxy's loopback address as its
// host; requests pass through it, and fail once every connection is reset.
func TestChaosStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path+"?"+r.URL.RawQuery)
	}))
	defer srv.Close()
	get := func(u string) (string, error) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	proxied, stop, err := startChaos(srv.URL+"/mcp?x=1", scenarios.NetworkFaults{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pu, err := url.Parse(proxied)
	if err != nil {
		t.Fatal(err)
	}
	if pu.Hostname() != "127.0.0.1" || pu.Host == strings.TrimPrefix(srv.URL, "http://") ||
		pu.Scheme != "http" || pu.Path != "/mcp" || pu.RawQuery != "x=1" {
		t.Errorf("proxied URL %s: want http://127.0.0.1:PORT/mcp?x=1, PORT the proxy's", proxied)
	}
	if got, err := get(proxied); got != "hello /mcp?x=1" || err != nil {
		t.Errorf("GET through the proxy: %q, %v", got, err)
	}
	stop()

	ev := metrics.NewEvents(0)
	f := scenarios.NetworkFaults{Reset: scenarios.Trigger{Probability: 1}}
	proxied, stop, err = startChaos(srv.URL, f, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if got, err := get(proxied); err == nil {
		t.Errorf("GET through a proxy that resets everything succeeded: %q", got)
	}
	stop()
	if n := ev.Counts()["network.reset"]; n < 1 {
		t.Errorf("%d network.reset events, want at least 1", n)
	}
}

// TestChaosUpstreamAddr: the proxy dials the target's host and port (80 by default) and
// refuses what it cannot proxy.
func TestChaosUpstreamAddr(t *testing.T) {
	for _, c := range []struct{ url, want, err string }{
		{"http://example.com/mcp", "example.com:80", ""},
		{"http://example.com:8080", "example.com:8080", ""},
		{"http://user:secret@10.0.0.1:9000/x", "10.0.0.1:9000", ""},
		{"http://[::1]/mcp", "[::1]:80", ""},
		{"http://[::1]:8443/mcp", "[::1]:8443", ""},
		{"https://example.com/mcp", "", "supports http only"},
		{"ftp://example.com", "", "not http"},
		{"http:///mcp", "", "no host"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := upstreamAddr(u)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.url, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.url, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", c.url, err)
		}
	}
	if _, _, err := startChaos("https://example.com", scenarios.NetworkFaults{}, 1, nil); err == nil ||
		!strings.Contains(err.Error(), "http only") {
		t.Errorf("startChaos(https): %v, want an http-only error", err)
	}
	if _, _, err := startChaos("http://%zz", scenarios.NetworkFaults{}, 1, nil); err == nil {
		t.Error("startChaos(bad URL): no error")
	}
}
