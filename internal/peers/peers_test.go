package peers

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestListenLoopbackOnly: every socket a peer listens on is on 127.0.0.1, read from the
// kernel's socket table (/proc/net/tcp and tcp6) for the sockets the process holds, not
// taken from what the peer says. server-everything, left to itself, binds every interface.
func TestListenLoopbackOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	for _, name := range []string{Everything, SDKTasks} {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			addrs := listening(t, p.pid)
			if len(addrs) == 0 {
				t.Fatalf("pid %d holds no listening TCP socket", p.pid)
			}
			for _, a := range addrs {
				if !strings.HasPrefix(a, "127.0.0.1:") {
					t.Errorf("%s listens on %s; want 127.0.0.1 only (all: %v)", name, a, addrs)
				}
			}
			if want := strings.TrimSuffix(strings.TrimPrefix(p.url, "http://"), "/mcp"); len(addrs) != 1 || addrs[0] != want {
				t.Errorf("listening on %v, announced %s", addrs, p.url)
			}
		})
	}
}

// TestMissingNamesThePackage: a directory without node_modules is reported by the package
// it lacks.
func TestMissingNamesThePackage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"dependencies":{"left-pad":"1.3.0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	why := Missing(dir)
	if strings.HasPrefix(why, "cannot run node") || strings.Contains(why, "older than") {
		t.Skipf("no usable node here: %s", why)
	}
	if !strings.Contains(why, "left-pad is not installed") {
		t.Errorf("Missing = %q, want it to name left-pad", why)
	}
}

// listening returns the local addresses of the TCP sockets in LISTEN state that pid holds.
func listening(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var addrs []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue // no IPv6 on this machine
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			const stateListen = "0A"
			if len(f) < 10 || f[3] != stateListen || !inodes[f[9]] {
				continue
			}
			addrs = append(addrs, procAddr(t, f[1]))
		}
	}
	return addrs
}

// procAddr turns /proc/net/tcp's "0100007F:1F90" (IPv4 as a little-endian word; IPv6 as
// four of them) into "127.0.0.1:8080".
func procAddr(t *testing.T, s string) string {
	h, p, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	var port int
	fmt.Sscanf(p, "%X", &port)
	return net.JoinHostPort(net.IP(raw).String(), fmt.Sprint(port))
}
