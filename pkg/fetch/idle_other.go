//go:build !unix

package fetch

// idleState tells whether the kept-alive connection can still carry a
// request. Without a non-blocking peek on this system, only bytes
// already buffered are seen; a connection the server closed while idle
// fails the next request.
func (c *conn2) idleState() idle {
	if c.br.Buffered() > 0 {
		return idleUnsolicited
	}
	return idleOpen
}
