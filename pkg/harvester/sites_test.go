package harvester

import (
	"net/url"
	"strings"
	"testing"
)

// slowSite and slowHost are siteOf and hostOf as url.Parse defines them.
func slowSite(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

func slowHost(site string) (string, bool) {
	u, err := url.Parse(site)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	return strings.ToLower(u.Hostname()), true
}

func TestSiteAndHostOf(t *testing.T) {
	for _, tc := range []struct{ url, site, host string }{
		{"http://a.cl/", "http://a.cl", "a.cl"},
		{"http://a.cl", "http://a.cl", "a.cl"},
		{"https://WWW.Example.CL:8443/x/y?q=1#f", "https://WWW.Example.CL:8443", "www.example.cl"},
		{"http://a.cl?x=1", "http://a.cl", "a.cl"},
		{"http://a.cl#top", "http://a.cl", "a.cl"},
		{"http://127.0.0.1:8080/robots.txt", "http://127.0.0.1:8080", "127.0.0.1"},
		{"http://user:pw@a.cl/x", "http://a.cl", "a.cl"},
		{"http://[::1]:80/x", "http://[::1]:80", "::1"},
		{"http://xn--bcher-kva.cl/", "http://xn--bcher-kva.cl", "xn--bcher-kva.cl"},
		{"HTTP://A.CL/", "http://A.CL", "a.cl"},
		{"http://a_b.cl/", "http://a_b.cl", "a_b.cl"},
	} {
		if got := siteOf(tc.url); got != tc.site {
			t.Errorf("siteOf(%q) = %q, want %q", tc.url, got, tc.site)
		}
		if got := hostOf(siteOf(tc.url)); got != tc.host {
			t.Errorf("hostOf(siteOf(%q)) = %q, want %q", tc.url, got, tc.host)
		}
	}
}

// FuzzSiteOf checks that the fast path of siteOf and hostOf agrees with
// url.Parse wherever url.Parse accepts the URL.
func FuzzSiteOf(f *testing.F) {
	for _, s := range []string{"http://a.cl/", "https://a.cl:8443/x?y#z", "http://u@a.cl/", "http://[::1]/", "http://a.cl:/", "http://a.cl:x/", "ftp://a-b.c_d/", "h://:80", "http://a%41.cl/", "http://a.cl:80:90/", "a1+.-://h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, _, ok := plainAuthority(raw); !ok {
			return
		}
		want, ok := slowSite(raw)
		if !ok {
			return
		}
		if got := siteOf(raw); got != want {
			t.Fatalf("siteOf(%q) = %q, url.Parse says %q", raw, got, want)
		}
		if wantHost, ok := slowHost(want); ok {
			if got := hostOf(want); got != wantHost {
				t.Fatalf("hostOf(%q) = %q, url.Parse says %q", want, got, wantHost)
			}
		}
	})
}
