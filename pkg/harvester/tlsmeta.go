package harvester

import (
	"strconv"

	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// tlsFields are the metadata fields of a response's TLS facts (none over
// plain HTTP).
func tlsFields(ti *fetch.TLSInfo) []warcio.Field {
	if ti == nil {
		return nil
	}
	out := []warcio.Field{
		{Name: warcio.MetaTLSProtocol, Value: ti.Version},
		{Name: warcio.MetaTLSCipher, Value: ti.Cipher},
		{Name: warcio.MetaTLSCertValid, Value: strconv.FormatBool(ti.Valid)},
	}
	if ti.Resumed {
		out = append(out, warcio.Field{Name: warcio.MetaTLSResumed, Value: "true"})
	}
	if ti.Problem != "" {
		out = append(out, warcio.Field{Name: warcio.MetaTLSCertProblem, Value: ti.Problem})
	}
	return out
}
