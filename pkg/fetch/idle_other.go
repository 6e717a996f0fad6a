//go:build !unix

package fetch

// idleClosed tells whether the kept-alive connection can no longer carry
// a request. Without a non-blocking peek on this system, only bytes
// already buffered are seen; a connection the server closed while idle
// fails the next request.
func (c *conn2) idleClosed() bool {
	return c.br.Buffered() > 0
}
