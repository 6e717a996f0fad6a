// Package inflate decodes a gzip member (RFC 1952) or a DEFLATE stream
// (RFC 1951) held whole in memory, straight into a buffer of its known
// size: the fast path of the WARC reader (pkg/warcio, a record's gzip
// member sized by its ISIZE trailer) and of the gatherer's decoding of
// bodies stored gzip-encoded (pkg/contentcoding). Anything it does not
// decode to the announced size and CRC-32 is ErrInflate, and the caller
// decodes it again with a streaming decompressor, which says what is
// wrong: it can only make a read faster, never change what it returns.
//
// Where each part of the decoder comes from in RFC 1951:
//
//   - §3.1.1 packing into bytes: bitReader, least significant bit first;
//     Huffman codes are packed starting with their most significant bit,
//     hence the reversed codes of huffTable.build.
//   - §3.2.2 Huffman codes from code lengths: huffTable.build.
//   - §3.2.3 block header (BFINAL, BTYPE): Tables.Inflate.
//   - §3.2.4 stored blocks (LEN, NLEN): Tables.Inflate.
//   - §3.2.5 lengths and distances (base values, extra bits):
//     lengthBase, lengthExtra, distBase, distExtra, inflateBlock.
//   - §3.2.6 fixed Huffman codes: fixedLit, fixedDist.
//   - §3.2.7 dynamic Huffman codes (HLIT, HDIST, HCLEN, the code
//     length alphabet and its repeat codes 16-18): readCodes.
//
// The gzip framing around it is RFC 1952 §2.3 (header: gzipHeaderEnd;
// CRC-32 and ISIZE trailer: Gunzip).
package inflate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
)

// The fast path: a gzip member held whole in memory, whose ISIZE trailer
// gives the size of its content, is decoded in one call straight into a
// buffer of that size, without the sliding window of a streaming
// decompressor (every byte written there and then copied out) and
// reading the input eight bytes at a time instead of byte by byte.
// FuzzInflate compares it with compress/flate.

// ErrInflate is any failure of Gunzip and Inflate; the caller then decodes
// the input with a streaming decompressor, which says what is wrong.
var ErrInflate = errors.New("whole-member inflate failed")

// Gunzip decodes the gzip member comp into out[:size] (cap(out) >= size),
// where size is the member's ISIZE; it returns the content, or ErrInflate
// when comp is not one member (nothing after it) that it decodes to
// exactly size bytes with the right CRC-32. FastOut bytes of room in out
// past size let it run its fast loop to the end.
func Gunzip(out, comp []byte, size int) (res []byte, err error) {
	var t Tables
	return t.Gunzip(out, comp, size)
}

// Gunzip is the package's Gunzip with the tables of t.
func (t *Tables) Gunzip(out, comp []byte, size int) (res []byte, err error) {
	defer func() {
		if recover() != nil { // a mistake of the decoder: the caller decodes again
			res, err = nil, ErrInflate
		}
	}()
	start, ok := gzipHeaderEnd(comp)
	if !ok {
		return nil, ErrInflate
	}
	out, end, err := t.Inflate(out[:size], comp[start:])
	if err != nil || len(out) != size {
		return nil, ErrInflate
	}
	trailer := comp[start+end:]
	if len(trailer) != 8 || binary.LittleEndian.Uint32(trailer) != crc32.ChecksumIEEE(out) || int(binary.LittleEndian.Uint32(trailer[4:])) != size {
		return nil, ErrInflate
	}
	return out, nil
}

// gzipHeaderEnd returns the offset of the deflate stream in a gzip member
// (RFC 1952 §2.3: the fixed header, then the optional fields its flags
// announce).
func gzipHeaderEnd(b []byte) (int, bool) {
	const (
		fhcrc    = 1 << 1
		fextra   = 1 << 2
		fname    = 1 << 3
		fcomment = 1 << 4
	)
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || b[3]&0xe0 != 0 {
		return 0, false
	}
	flags, i := b[3], 10
	if flags&fextra != 0 {
		if len(b) < i+2 {
			return 0, false
		}
		i += 2 + int(binary.LittleEndian.Uint16(b[i:]))
	}
	for _, f := range []byte{fname, fcomment} {
		if flags&f != 0 {
			if i > len(b) {
				return 0, false
			}
			z := bytes.IndexByte(b[i:], 0)
			if z < 0 {
				return 0, false
			}
			i += z + 1
		}
	}
	if flags&fhcrc != 0 {
		return 0, false // a header CRC is left to the streaming decompressor to check
	}
	if i > len(b) {
		return 0, false
	}
	return i, true
}

// Huffman decoding tables. An entry of a primary table, indexed by the
// next bits of the input (the table's width), is either a symbol or a
// link to a subtable for longer codes. Its parts, low bits first:
//
//   - bits 0-4: how many bits the symbol takes in all, its code and the
//     extra bits that follow it (RFC 1951 §3.2.5), so that one shift
//     consumes both; 0 for an entry with no code (an invalid input);
//   - bits 8-11: the length of the code alone, where the extra bits
//     start; in a link, the subtable's index width;
//   - bit 12 (entryValue): a length or a distance; an entry that is
//     neither this nor a literal is a link (bit 13), the end of the block
//     (bit 14), or a code with no meaning (neither: symbols 286, 287,
//     distances 30, 31, and the zero entry of no code at all);
//   - bits 16-30: the value: a literal byte, the base of a length or of
//     a distance, a code length symbol; in a link, the subtable's offset;
//   - bit 31 (entryLiteral): a literal, so that the literal fast path
//     tests the sign alone.
//
// A subtable's entries count the bits past the primary table's.
const (
	entryTotal   = 0x1f
	entryCodeSh  = 8
	entryValue   = 1 << 12
	entryLink    = 1 << 13
	entryEnd     = 1 << 14
	entryLiteral = 1 << 31

	litPrimary  = 10
	distPrimary = 8
	maxCodeLen  = 15
	numLitLen   = 288
	numDist     = 32
	endOfBlock  = 256
)

type huffTable struct {
	primary []uint32
	sub     []uint32
	bits    uint // primary index width
}

// litEntry, distEntry and plainEntry give the symbol part of a table
// entry of a literal/length code, a distance code and a code length code:
// its value and flags, and in the low bits its number of extra bits.
func litEntry(sym int) uint32 {
	switch {
	case sym < endOfBlock:
		return entryLiteral | uint32(sym)<<16
	case sym == endOfBlock:
		return entryEnd
	case sym-257 < len(lengthBase):
		i := sym - 257
		return uint32(lengthBase[i])<<16 | entryValue | uint32(lengthExtra[i])
	}
	return 0
}

func distEntry(sym int) uint32 {
	if sym < len(distBase) {
		return distBase[sym]<<16 | entryValue | uint32(distExtra[sym])
	}
	return 0
}

func plainEntry(sym int) uint32 { return uint32(sym) << 16 }

// build fills t for the canonical Huffman code with the given code
// lengths (RFC 1951 §3.2.2), the entry of each symbol made by entry; it
// reports false for an over-subscribed or incomplete code, except the
// incomplete codes compress/flate takes (no code at all, or a single code
// of one bit), whose unused codes are left invalid.
func (t *huffTable) build(lengths []uint8, bits uint, entry func(int) uint32) bool {
	var count [maxCodeLen + 1]int
	maxLen := 0
	for _, l := range lengths {
		count[l]++
		maxLen = max(maxLen, int(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	// As compress/flate: an incomplete code only when it is empty (a
	// block without distances) or one code of one bit.
	if left != 0 && maxLen != 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	var next [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		next[l+1] = (next[l] + count[l]) << 1
	}
	t.bits = bits
	if cap(t.primary) < 1<<bits {
		t.primary = make([]uint32, 1<<bits)
	}
	t.primary = t.primary[:1<<bits]
	clear(t.primary)
	t.sub = t.sub[:0]
	subBits := uint(0)
	if uint(maxLen) > bits {
		subBits = uint(maxLen) - bits
	}
	mask := 1<<bits - 1
	prim := t.primary // a local slice: the stores below cannot change it
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		code := next[l]
		next[l]++
		rev := int(reverseBits(uint16(code), uint(l)))
		if uint(l) <= bits {
			e := entry(sym) + uint32(l) + uint32(l)<<entryCodeSh
			for i := rev; i < len(prim); i += 1 << l {
				prim[i] = e
			}
			continue
		}
		p := &prim[rev&mask]
		if *p&entryLink == 0 {
			*p = uint32(len(t.sub))<<16 | entryLink | uint32(subBits)<<entryCodeSh
			t.sub = append(t.sub, make([]uint32, 1<<subBits)...)
		}
		base := int(*p >> 16)
		rest := uint(l) - bits
		e := entry(sym) + uint32(rest) + uint32(rest)<<entryCodeSh
		for i := rev >> bits; i < 1<<subBits; i += 1 << rest {
			t.sub[base+i] = e
		}
	}
	return true
}

// reverseBits reverses the low n bits of v (1 <= n <= 16).
func reverseBits(v uint16, n uint) uint16 { return bits.Reverse16(v) >> (16 - n) }

// Base values and extra bits of the length symbols 257-285 and of the
// distance symbols 0-29 (RFC 1951 §3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// codeLengthOrder is the order of the code length code lengths.
	codeLengthOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// fixedLit and fixedDist are the tables of the fixed Huffman codes
// (RFC 1951 §3.2.6).
var fixedLit, fixedDist = func() (huffTable, huffTable) {
	var l [numLitLen]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var d [numDist]uint8
	for i := range d {
		d[i] = 5
	}
	var lit, dist huffTable
	lit.build(l[:], litPrimary, litEntry)
	dist.build(d[:], distPrimary, distEntry)
	return lit, dist
}()

// bitReader reads a deflate stream from memory, least significant bit
// first (RFC 1951 §3.1.1).
type bitReader struct {
	src   []byte
	pos   int    // next byte of src to load
	bits  uint64 // loaded bits, the next one lowest
	nbits uint   // how many of bits are valid
	over  int    // bytes loaded past the end of src (as zeros)
}

// refill loads whole bytes until at least 56 bits are held. Eight bytes
// are loaded at once where src has them: the bits beyond the whole bytes
// counted are the next bytes' own, loaded again by the next refill. Past
// the end of src it loads zeros and counts them: a stream that needs
// them is truncated, which the caller finds with overrun.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.src) {
		r.bits |= binary.LittleEndian.Uint64(r.src[r.pos:]) << r.nbits
		r.pos += int(63-r.nbits) >> 3
		r.nbits |= 56
		return
	}
	for r.nbits <= 56 {
		if r.pos < len(r.src) {
			r.bits |= uint64(r.src[r.pos]) << r.nbits
			r.pos++
		} else {
			r.over++
		}
		r.nbits += 8
	}
}

// overrun reports whether bits past the end of src were consumed.
func (r *bitReader) overrun() bool { return r.over > int(r.nbits>>3) }

// take consumes and returns the next n bits (n <= nbits).
func (r *bitReader) take(n uint) uint32 {
	v := uint32(r.bits & (1<<n - 1))
	r.bits >>= n
	r.nbits -= n
	return v
}

// need makes sure n bits are held (n <= 56).
func (r *bitReader) need(n uint) {
	if r.nbits < n {
		r.refill()
	}
}

// decode reads one entry of table t; ok is false for an invalid code.
// The caller has made sure maxCodeLen bits are held.
func (r *bitReader) decode(t *huffTable) (e uint32, ok bool) {
	e = t.primary[r.bits&(1<<t.bits-1)]
	if e&entryLink != 0 {
		r.bits >>= t.bits
		r.nbits -= t.bits
		e = t.sub[int(e>>16)+int(r.bits&(1<<(e>>entryCodeSh&0xf)-1))]
	}
	n := uint(e & entryTotal)
	if n == 0 {
		return 0, false
	}
	r.bits >>= n
	r.nbits -= n
	return e, true
}

// Inflate decodes the raw deflate stream at the start of src into
// out[:0], which must have room for the whole content: it fails rather
// than grow it. It returns the content and the offset in src just past
// the stream (its last byte padded).
func Inflate(out, src []byte) ([]byte, int, error) {
	var t Tables
	return t.Inflate(out, src)
}

// Tables are the tables of dynamic blocks, kept from one member to the
// next by a caller that decodes many (a warcio.Reader, a gatherer
// worker). The zero value is ready to use; a Tables is not safe for
// concurrent use.
type Tables struct {
	lit, dist, codes huffTable
}

// Inflate is the package's Inflate with the tables of t.
func (t *Tables) Inflate(out, src []byte) ([]byte, int, error) {
	r := bitReader{src: src}
	lit, dist := &t.lit, &t.dist
	op := 0
	out = out[:cap(out)]
	for {
		// The block header: BFINAL, then BTYPE (RFC 1951 §3.2.3).
		r.need(3)
		final := r.take(1)
		switch r.take(2) {
		case 0: // stored (RFC 1951 §3.2.4): to a byte boundary, LEN, NLEN, the bytes
			r.take(r.nbits & 7)
			r.need(32)
			n := int(r.take(16))
			if int(r.take(16)) != ^n&0xffff {
				return nil, 0, ErrInflate
			}
			// The whole bytes still held come first, then the rest is
			// copied from src.
			for n > 0 && r.nbits >= 8 {
				if op >= len(out) {
					return nil, 0, ErrInflate
				}
				out[op] = byte(r.take(8))
				op++
				n--
			}
			if n > 0 { // nothing is held: bits holds no more than copies of src's next bytes
				if r.over > 0 || r.pos+n > len(src) || op+n > len(out) {
					return nil, 0, ErrInflate
				}
				op += copy(out[op:], src[r.pos:r.pos+n])
				r.pos += n
				r.bits = 0
			}
		case 1: // fixed codes (RFC 1951 §3.2.6)
			var err error
			if op, err = inflateBlock(&r, out, op, &fixedLit, &fixedDist); err != nil {
				return nil, 0, err
			}
		case 2: // dynamic codes (RFC 1951 §3.2.7)
			if err := readCodes(&r, lit, dist, &t.codes); err != nil {
				return nil, 0, err
			}
			var err error
			if op, err = inflateBlock(&r, out, op, lit, dist); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, ErrInflate
		}
		if r.overrun() {
			return nil, 0, ErrInflate
		}
		if final == 1 {
			break
		}
	}
	r.take(r.nbits & 7)
	return out[:op], r.pos + r.over - int(r.nbits>>3), nil
}

// readCodes reads the code lengths of a dynamic block (RFC 1951 §3.2.7)
// and builds its tables.
func readCodes(r *bitReader, lit, dist, ct *huffTable) error {
	r.need(14)
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	nclen := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return ErrInflate
	}
	var clen [19]uint8
	for i := range nclen {
		r.need(3)
		clen[codeLengthOrder[i]] = uint8(r.take(3))
	}
	if !ct.build(clen[:], 7, plainEntry) {
		return ErrInflate
	}
	var lengths [numLitLen + numDist]uint8
	for i := 0; i < nlit+ndist; {
		r.need(maxCodeLen + 7)
		e, ok := r.decode(ct)
		if !ok {
			return ErrInflate
		}
		var rep int
		var val uint8
		switch sym := e >> 16; {
		case sym < 16:
			lengths[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return ErrInflate
			}
			val, rep = lengths[i-1], 3+int(r.take(2))
		case sym == 17:
			rep = 3 + int(r.take(3))
		default:
			rep = 11 + int(r.take(7))
		}
		if i+rep > nlit+ndist {
			return ErrInflate
		}
		for range rep {
			lengths[i] = val
			i++
		}
		if r.overrun() {
			return ErrInflate
		}
	}
	if lengths[endOfBlock] == 0 {
		return ErrInflate
	}
	if !lit.build(lengths[:nlit], litPrimary, litEntry) || !dist.build(lengths[nlit:nlit+ndist], distPrimary, distEntry) {
		return ErrInflate
	}
	return nil
}

// inflateBlock decodes the symbols of one block with the given tables
// into out from op, up to its end-of-block code, and returns the new op:
// literals, and length/distance pairs that copy from the output already
// written (RFC 1951 §3.2.5).
//
// The bit reader's state is held in locals. A fast loop runs while at
// least eight bytes of input and FastOut bytes of out remain: it loads
// the next eight input bytes for every symbol without testing the bits
// held (they are then at least 56, which covers a length and a distance
// code with their extra bits, 48 bits), and copies matches by whole
// words, up to 40 bytes past a match's end, into room it knows out has.
// The last symbols go through a slow loop that tests everything.
func inflateBlock(r *bitReader, out []byte, op int, lit, dist *huffTable) (int, error) {
	if lit.bits != litPrimary || dist.bits != distPrimary {
		return 0, ErrInflate
	}
	lp := (*[1 << litPrimary]uint32)(lit.primary)
	dp := (*[1 << distPrimary]uint32)(dist.primary)
	src := r.src
	bits, nbits, pos := r.bits, r.nbits, r.pos
	// In the fast loop, only the low six bits of nbits count: a symbol's
	// bits are taken off by subtracting its whole entry, whose bits 5 to
	// 7 are zero (and a shift takes the low six bits of its count).
	srcEnd, outEnd := len(src)-8, len(out)-FastOut
	// The entry of the next symbol is looked up as soon as the bits of
	// the one before are consumed (the bits held then cover it), before
	// the refill, which does not change them.
	var e uint32
	if pos <= srcEnd {
		bits |= binary.LittleEndian.Uint64(src[pos:]) << (nbits & 63)
		pos += int(63-nbits) >> 3
		nbits |= 56
		e = lp[bits&(1<<litPrimary-1)]
	}
	for pos <= srcEnd && op <= outEnd {
		// Eight bytes are loaded at once: the bits beyond the whole
		// bytes counted are the next bytes' own, loaded again the same
		// by the next refill. All 64 bits held are then the input's.
		bits |= binary.LittleEndian.Uint64(src[pos:]) << (nbits & 63)
		pos += int(^nbits&63) >> 3
		nbits |= 56
		if int32(e) < 0 {
			// Literals come in runs: up to five whose codes are in the
			// primary table (10 bits at most) are taken from the 56 bits
			// or more of one refill (the 64 held then still cover the
			// next entry's look-up).
			lw := (*[5]byte)(out[op:])
			bits >>= uint(e) & 63
			nbits -= uint(e)
			lw[0] = byte(e >> 16)
			e = lp[bits&(1<<litPrimary-1)]
			if int32(e) >= 0 {
				op++
				continue
			}
			bits >>= uint(e) & 63
			nbits -= uint(e)
			lw[1] = byte(e >> 16)
			e = lp[bits&(1<<litPrimary-1)]
			if int32(e) >= 0 {
				op += 2
				continue
			}
			bits >>= uint(e) & 63
			nbits -= uint(e)
			lw[2] = byte(e >> 16)
			e = lp[bits&(1<<litPrimary-1)]
			if int32(e) >= 0 {
				op += 3
				continue
			}
			bits >>= uint(e) & 63
			nbits -= uint(e)
			lw[3] = byte(e >> 16)
			e = lp[bits&(1<<litPrimary-1)]
			if int32(e) >= 0 {
				op += 4
				continue
			}
			bits >>= uint(e) & 63
			nbits -= uint(e)
			lw[4] = byte(e >> 16)
			e = lp[bits&(1<<litPrimary-1)]
			op += 5
			continue
		}
		if e&entryValue == 0 { // a link, the end of the block, or an invalid code
			if e&entryLink != 0 {
				bits >>= litPrimary
				nbits -= litPrimary
				e = lit.sub[int(e>>16)+int(bits&(1<<(e>>entryCodeSh&0xf)-1))]
			}
			if int32(e) < 0 {
				bits >>= uint(e) & 63
				nbits -= uint(e)
				out[op] = byte(e >> 16)
				op++
				e = lp[bits&(1<<litPrimary-1)]
				continue
			}
			if e&entryValue == 0 {
				if e&entryEnd != 0 {
					r.bits, r.nbits, r.pos = bits>>(uint(e)&63), (nbits-uint(e))&63, pos
					return op, nil
				}
				return 0, ErrInflate
			}
		}
		// The length: its code and extra bits taken in one shift.
		saved := bits
		bits >>= uint(e) & 63
		nbits -= uint(e)
		length := int(e>>16) + int(saved&(1<<(e&entryTotal)-1)>>(e>>entryCodeSh&0xf))
		e = dp[bits&(1<<distPrimary-1)]
		if e&entryValue == 0 {
			if e&entryLink == 0 {
				return 0, ErrInflate
			}
			bits >>= distPrimary
			nbits -= distPrimary
			e = dist.sub[int(e>>16)+int(bits&(1<<(e>>entryCodeSh&0xf)-1))]
			if e&entryValue == 0 {
				return 0, ErrInflate
			}
		}
		saved = bits
		bits >>= uint(e) & 63
		nbits -= uint(e)
		d := int(e>>16) + int(saved&(1<<(e&entryTotal)-1)>>(e>>entryCodeSh&0xf))
		e = lp[bits&(1<<litPrimary-1)]
		if d > op {
			return 0, ErrInflate
		}
		// out has FastOut bytes from op: room for a match of 258 bytes
		// copied by words, and for the 40 bytes every match copies.
		w := (*[FastOut]byte)(out[op:])
		if d >= 8 {
			// A distance of 8 or more never reads a byte this copy has yet
			// to write. Five words, without a test: most matches are
			// shorter than 40 bytes; what is past the match's end is
			// rewritten by what follows.
			s := (*[FastOut]byte)(out[op-d : op-d+FastOut])
			binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(s[0:]))
			binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(s[8:]))
			binary.LittleEndian.PutUint64(w[16:], binary.LittleEndian.Uint64(s[16:]))
			binary.LittleEndian.PutUint64(w[24:], binary.LittleEndian.Uint64(s[24:]))
			binary.LittleEndian.PutUint64(w[32:], binary.LittleEndian.Uint64(s[32:]))
			for i := 40; i < length; i += 8 {
				binary.LittleEndian.PutUint64(w[i:], binary.LittleEndian.Uint64(s[i:]))
			}
		} else if d == 1 {
			// A run of one byte, written as words of that byte.
			v := uint64(out[op-1]) * 0x0101010101010101
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(w[i:], v)
			}
		} else { // an overlapping copy repeats the last d bytes
			s := out[op-d:]
			for i := range length {
				w[i] = s[i]
			}
		}
		op += length
	}
	return inflateTail(r, out, op, lit, dist, bits, nbits&63, pos)
}

// FastOut is the room in out that inflateBlock's fast loop needs: the
// longest match, 258 bytes, rounded up to whole words.
const FastOut = 264

// inflateTail is inflateBlock's slow loop, for the last symbols of a
// block: it refills the bits held only when needed, loading zeros past
// the end of the input and counting them, and it writes no byte past a
// match's end.
func inflateTail(r *bitReader, out []byte, op int, lit, dist *huffTable, bits uint64, nbits uint, pos int) (int, error) {
	lp := (*[1 << litPrimary]uint32)(lit.primary)
	dp := (*[1 << distPrimary]uint32)(dist.primary)
	ls, dsub := lit.sub, dist.sub
	for {
		// 56 bits cover a length (15 + 5 bits) and a distance (15 + 13).
		if nbits < 48 {
			r.bits, r.nbits, r.pos = bits, nbits, pos
			r.refill()
			if r.over > 8 {
				return 0, ErrInflate
			}
			bits, nbits, pos = r.bits, r.nbits, r.pos
		}
		e := lp[bits&(1<<litPrimary-1)]
		if e&entryLink != 0 {
			bits >>= litPrimary
			nbits -= litPrimary
			e = ls[int(e>>16)+int(bits&(1<<(e>>entryCodeSh&0xf)-1))]
		}
		if int32(e) < 0 {
			n := e & entryTotal
			bits >>= n
			nbits -= uint(n)
			if op >= len(out) {
				return 0, ErrInflate
			}
			out[op] = byte(e >> 16)
			op++
			continue
		}
		if e&entryValue == 0 {
			if e&entryEnd != 0 {
				n := e & entryTotal
				r.bits, r.nbits, r.pos = bits>>n, nbits-uint(n), pos
				return op, nil
			}
			return 0, ErrInflate
		}
		saved := bits
		n := e & entryTotal
		bits >>= n
		nbits -= uint(n)
		length := int(e>>16) + int(saved&(1<<n-1)>>(e>>entryCodeSh&0xf))
		e = dp[bits&(1<<distPrimary-1)]
		if e&entryLink != 0 {
			bits >>= distPrimary
			nbits -= distPrimary
			e = dsub[int(e>>16)+int(bits&(1<<(e>>entryCodeSh&0xf)-1))]
		}
		if e&entryValue == 0 {
			return 0, ErrInflate
		}
		saved = bits
		n = e & entryTotal
		bits >>= n
		nbits -= uint(n)
		d := int(e>>16) + int(saved&(1<<n-1)>>(e>>entryCodeSh&0xf))
		if d > op || length > len(out)-op {
			return 0, ErrInflate
		}
		if d >= length {
			copy(out[op:op+length], out[op-d:op])
		} else { // an overlapping copy repeats the last d bytes
			for i := range length {
				out[op+i] = out[op-d+i]
			}
		}
		op += length
	}
}
