package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// Kind classifies why a fetch failed. It is the first word of the error
// text written to the fetch log, so the log can be counted by kind.
type Kind string

// The kinds of failure.
const (
	KindBadURL    Kind = "bad-url"         // the URL cannot be requested
	KindDNS       Kind = "dns"             // the host name did not resolve
	KindBlocked   Kind = "blocked-address" // the address is in a refused network
	KindConnect   Kind = "connect"         // the connection was refused or failed
	KindTimeout   Kind = "timeout"         // connect, read or total time limit
	KindReset     Kind = "reset"           // the server closed or reset the connection
	KindTLS       Kind = "tls"             // the TLS handshake failed
	KindProtocol  Kind = "protocol"        // the response was not valid HTTP/1.x
	KindDecode    Kind = "decode"          // a gzip body could not be decoded
	KindCancelled Kind = "cancelled"       // the harvester is stopping
)

// Error is a failed fetch. Its Text is what the fetch log records.
type Error struct {
	URL    string // the URL fetched, if known
	Kind   Kind
	Detail string // human-readable cause
	Err    error  // underlying error, if any
}

// Text is the error without the URL: "timeout: no data for 20s",
// "blocked-address 10.0.0.1". Its first word (up to ':' or space) is the
// kind.
func (e *Error) Text() string {
	if e.Kind == KindBlocked {
		return string(e.Kind) + " " + e.Detail
	}
	if e.Detail == "" {
		return string(e.Kind)
	}
	return string(e.Kind) + ": " + e.Detail
}

func (e *Error) Error() string {
	if e.URL == "" {
		return e.Text()
	}
	return fmt.Sprintf("fetch %s: %s", e.URL, e.Text())
}

func (e *Error) Unwrap() error { return e.Err }

// Text returns the fetch log text of err: the Text of an *Error in its
// chain, else the error's message; "" for nil.
func Text(err error) string {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Text()
	}
	return err.Error()
}

// KindOf returns the kind of a fetch log error text: its first word, up
// to ':' or a space.
func KindOf(text string) string {
	if i := strings.IndexAny(text, ": "); i >= 0 {
		return text[:i]
	}
	return text
}

// Causes of a request context's cancellation, told apart by
// context.Cause.
var (
	errTotalTimeout = errors.New("total time limit")
	errReadTimeout  = errors.New("read time limit")
	errFirstByte    = errors.New("first byte time limit")
	errSlow         = errors.New("minimum transfer rate")
)

// classify turns an error of the transport or of a body read into an
// *Error. reqCtx is the request's context, whose cause tells time limits
// from a stopping harvester.
func (h *Host) classify(reqCtx context.Context, rawURL string, err error) *Error {
	e := &Error{URL: rawURL, Err: err}
	switch cause := context.Cause(reqCtx); {
	case errors.Is(cause, errTotalTimeout):
		e.Kind, e.Detail = KindTimeout, fmt.Sprintf("total time limit %s exceeded", h.c.cfg.TotalTimeout)
		return e
	case errors.Is(cause, errReadTimeout):
		e.Kind, e.Detail = KindTimeout, fmt.Sprintf("no data for %s", h.c.cfg.ReadTimeout)
		return e
	case errors.Is(cause, errFirstByte):
		e.Kind, e.Detail = KindTimeout, fmt.Sprintf("no response within %s", h.c.cfg.FirstByteTimeout)
		return e
	case errors.Is(cause, errSlow):
		e.Kind, e.Detail = KindTimeout, fmt.Sprintf("transfer slower than %d bytes/s over %s", h.c.cfg.MinTransferRate, h.c.cfg.RateWindow)
		return e
	case cause != nil:
		e.Kind, e.Detail = KindCancelled, cause.Error()
		return e
	}
	var fe *Error
	if errors.As(err, &fe) {
		e.Kind, e.Detail = fe.Kind, fe.Detail
		return e
	}
	var ne net.Error
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind, e.Detail = KindConnect, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Kind, e.Detail = KindReset, "connection reset by peer"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Kind, e.Detail = KindReset, "connection closed before the response ended"
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &hostErr):
		e.Kind, e.Detail = KindTLS, err.Error()
	case errors.As(err, &ne) && ne.Timeout():
		e.Kind, e.Detail = KindTimeout, "network timeout"
	case errors.Is(err, syscall.EHOSTUNREACH):
		e.Kind, e.Detail = KindConnect, "no route to host"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ENETDOWN):
		e.Kind, e.Detail = KindConnect, "network unreachable"
	default:
		msg := err.Error()
		if strings.Contains(msg, "tls:") {
			e.Kind, e.Detail = KindTLS, lastPart(msg)
		} else if strings.Contains(msg, "server closed") || strings.Contains(msg, "connection closed") {
			e.Kind, e.Detail = KindReset, lastPart(msg)
		} else {
			e.Kind, e.Detail = KindProtocol, lastPart(msg)
		}
	}
	return e
}

// lastPart drops the "Get \"url\": " prefixes net/http puts in front of
// its messages.
func lastPart(msg string) string {
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		msg = msg[i+3:]
	}
	return strings.TrimPrefix(msg, "net/http: ")
}
