package fetch

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// TLSInfo is what the harvester records of the TLS connection a
// response came over. The crawler fetches whatever the certificate
// (archival crawling: a national web has many broken ones) and checks
// it separately, so that the record says whether it would have passed.
type TLSInfo struct {
	// Version is the protocol version: "TLS 1.2", "TLS 1.3".
	Version string
	// Cipher is the cipher suite's standard name.
	Cipher string
	// Resumed tells whether the handshake resumed an earlier session
	// (no certificate exchanged).
	Resumed bool
	// Valid tells whether the server's certificate chain verifies
	// against the trusted roots for the host name.
	Valid bool
	// Problem says why not, when not: its first word is one of
	// "expired", "not-yet-valid", "wrong-name", "self-signed",
	// "unknown-authority", "no-certificate", "invalid".
	Problem string
}

// sessionCacheSize is the number of TLS sessions a Client keeps for
// resumption (one per server name).
const sessionCacheSize = 8192

// LoadRoots reads a PEM file of certificates to trust, besides nothing
// else: a test web's CA. An empty path gives nil (the system's roots).
func LoadRoots(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CA file %s: %w", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) || !bytes.Contains(data, []byte("CERTIFICATE")) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// tlsInfo describes the connection state st to the server name (empty
// for an IP literal), verifying its certificates against roots (nil: the
// system's).
func tlsInfo(st tls.ConnectionState, name string, roots *x509.CertPool) *TLSInfo {
	info := &TLSInfo{Version: tls.VersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite), Resumed: st.DidResume}
	certs := st.PeerCertificates
	if len(certs) == 0 {
		info.Problem = "no-certificate"
		return info
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{DNSName: name, Roots: roots, Intermediates: inter, CurrentTime: time.Now()})
	if err == nil {
		info.Valid = true
		return info
	}
	info.Problem = certProblem(certs[0], err)
	return info
}

// certProblem names why leaf did not verify.
func certProblem(leaf *x509.Certificate, err error) string {
	var inv x509.CertificateInvalidError
	var host x509.HostnameError
	var unknown x509.UnknownAuthorityError
	switch {
	case errors.As(err, &inv) && inv.Reason == x509.Expired:
		if time.Now().After(leaf.NotAfter) {
			return "expired: not after " + leaf.NotAfter.UTC().Format(time.RFC3339)
		}
		return "not-yet-valid: not before " + leaf.NotBefore.UTC().Format(time.RFC3339)
	case errors.As(err, &host):
		names := leaf.DNSNames
		if len(names) == 0 && leaf.Subject.CommonName != "" {
			names = []string{leaf.Subject.CommonName}
		}
		if len(names) > 3 {
			names = append(names[:3:3], "...")
		}
		return "wrong-name: valid for " + strings.Join(names, ", ")
	case errors.As(err, &unknown):
		if bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil {
			return "self-signed"
		}
		return "unknown-authority: issuer " + leaf.Issuer.String()
	}
	return "invalid: " + err.Error()
}
