package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestNoSilentRetry: when a kept-alive connection is reset while the
// server reads the second request, Go's Transport would send the GET again
// at once on a new connection, unseen by the harvester's politeness clock
// and its fetch log (found by the fault-injection run against the test
// web's reset host). The server must see the request once, and the client
// an error.
func TestNoSilentRetry(t *testing.T) {
	var requests atomic.Int64
	url := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			requests.Add(1)
			if len(req.TransferEncoding) > 0 || req.ContentLength != 0 || req.Header.Get("Content-Length") != "" {
				t.Errorf("GET sent with a body: %v %d", req.TransferEncoding, req.ContentLength)
			}
			if n == 1 || req.URL.Path == "/second" {
				c.(*net.TCPConn).SetLinger(0) // reset, no response
				return
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	if _, err := h.Get(context.Background(), url+"/first", testMax); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Get(context.Background(), url+"/second", testMax); err == nil {
		t.Error("reset connection gave no error")
	} else if k := KindOf(Text(err)); k != string(KindReset) {
		// The failure of the connection the request went on, not of the
		// refused second one.
		t.Errorf("error %q, want kind %s", Text(err), KindReset)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("server saw %d requests, want 2 (the second must not be retried)", n)
	}
}

// Text of a fetch error is its log text, of another error its message,
// and of nil nothing (it panicked).
func TestText(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), "plain"},
		{fmt.Errorf("wrapped: %w", &Error{URL: "http://x.cl/", Kind: KindConnect, Detail: "refused"}), (&Error{URL: "http://x.cl/", Kind: KindConnect, Detail: "refused"}).Text()},
	} {
		if got := Text(tt.err); got != tt.want {
			t.Errorf("Text(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
