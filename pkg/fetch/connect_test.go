package fetch

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullListener returns a loopback address whose accept queue is full, so
// that a new connection attempt gets no answer (Linux drops the SYN): a
// server that does not answer, on loopback.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("socket:", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skip("bind:", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip("listen:", err)
	}
	sa, _ := syscall.Getsockname(fd)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}
	// Fill the queue: connections that are never accepted.
	for i := 0; i < 4; i++ {
		c, err := net.DialTimeout("tcp", addr.String(), 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.DialTimeout("tcp", addr.String(), 300*time.Millisecond)
	if err == nil {
		c.Close()
		t.Skip("the kernel still completes connections to a full queue")
	}
	return addr.String()
}

// TestConnectTimeout: a server that never completes the handshake is
// given up after connect_timeout.
func TestConnectTimeout(t *testing.T) {
	addr := fullListener(t)
	cfg := testConfig()
	cfg.ConnectTimeout = 400 * time.Millisecond
	resp, err, took := get(t, cfg, "http://"+addr+"/")
	if resp != nil || kindOf(err) != KindTimeout || !strings.Contains(Text(err), "connect to 127.0.0.1 after 400ms") {
		t.Fatalf("got %v, %v", resp, err)
	}
	if took < cfg.ConnectTimeout || took > cfg.ConnectTimeout+time.Second {
		t.Errorf("gave up after %v", took)
	}
}
