//go:build unix

package fetch

import (
	"errors"
	"syscall"
)

// idleClosed tells whether the kept-alive connection can no longer carry
// a request: the server closed or reset it while it was idle, or sent
// bytes nobody asked for. It looks at the socket without waiting (a
// non-blocking peek), so the next request goes on a new connection
// instead of failing on a dead one.
func (c *conn2) idleClosed() bool {
	if c.br.Buffered() > 0 {
		return true // unsolicited bytes after the last response
	}
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var rerr error
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait
	})
	if err != nil {
		return true
	}
	if errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK) || errors.Is(rerr, syscall.EINTR) {
		return false // nothing to read: still open
	}
	// End of file (n == 0, no error), an error, or data.
	return true
}
