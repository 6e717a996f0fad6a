//go:build unix

package fetch

import (
	"errors"
	"syscall"
)

// idleState tells whether the kept-alive connection can still carry a
// request: the server may have closed or reset it while it was idle, or
// sent bytes nobody asked for. It looks at the socket without waiting (a
// non-blocking peek), so the next request goes on a new connection
// instead of failing on a dead one.
func (c *conn2) idleState() idle {
	if c.br.Buffered() > 0 {
		return idleUnsolicited
	}
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return idleOpen
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return idleClosed
	}
	var n int
	var rerr error
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait
	})
	switch {
	case err != nil:
		return idleClosed
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		return idleOpen // nothing to read
	case rerr == nil && n > 0 && c.raw == c.Conn:
		return idleUnsolicited // bytes on a plain connection
	}
	// End of file, a reset, or TLS records (an alert, most likely
	// close_notify).
	return idleClosed
}
