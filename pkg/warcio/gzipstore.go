package warcio

import (
	"encoding/binary"
	"hash/crc32"
)

// storedHeader is the gzip member header (RFC 1952 §2.3) of a stored
// member: deflate, no flags, no modification time, no extra flags, OS
// unknown — what gzip.Writer writes for a member without a name or time.
var storedHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// maxStoredBlock is the largest deflate stored block (RFC 1951 §3.2.4).
const maxStoredBlock = 65535

// appendStored appends to out one gzip member holding the concatenation
// of parts uncompressed, in deflate stored blocks: the same member a
// gzip.Writer at NoCompression makes (any gzip reader reads it), without
// the writer's buffering. It computes the CRC-32 while copying.
func appendStored(out []byte, parts ...[]byte) []byte {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	blocks := max(1, (size+maxStoredBlock-1)/maxStoredBlock)
	out = growTo(out, len(out)+len(storedHeader)+5*blocks+size+8)
	out = append(out, storedHeader[:]...)
	var crc uint32
	left := size
	pi, po := 0, 0 // current part and offset in it
	for b := 0; b < blocks; b++ {
		n := min(left, maxStoredBlock)
		left -= n
		final := byte(0)
		if left == 0 {
			final = 1 // BFINAL, BTYPE 00 (stored), padded to the byte
		}
		out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		for n > 0 {
			p := parts[pi][po:]
			if len(p) > n {
				p = p[:n]
			}
			out = append(out, p...)
			crc = crc32.Update(crc, crc32.IEEETable, p)
			n -= len(p)
			po += len(p)
			if po == len(parts[pi]) {
				pi, po = pi+1, 0
			}
		}
		for pi < len(parts) && po == len(parts[pi]) {
			pi, po = pi+1, 0 // skip empty parts
		}
	}
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, uint32(size))
}

// growTo returns b with room for n bytes in all, keeping its content.
func growTo(b []byte, n int) []byte {
	if n <= cap(b) {
		return b
	}
	nb := make([]byte, len(b), max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}
