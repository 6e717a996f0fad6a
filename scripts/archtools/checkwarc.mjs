// checkwarc.mjs FILE.warc.gz ...: reads every record of the WARC files
// with warcio.js (the Webrecorder library ReplayWeb.page reads archives
// with) and checks them; prints one JSON object on stdout (what was read,
// and every problem found) and exits 0, or 2 on bad arguments. Run by
// scripts/archtools_test.go (TestArchiveTools) from a directory whose
// node_modules holds the pinned packages of package.json.
//
// Checked, for every record of every file:
//   - it parses (WARC header, Content-Length framing, gzip members), and
//     its block is exactly Content-Length bytes;
//   - WARC-Block-Digest is the digest of the block, read as warcio.js
//     delimits it (every record but warcinfo must have one);
//   - WARC-Payload-Digest of a response is the digest of its payload, the
//     bytes after the HTTP header as warcio.js parses it, not decoded;
//   - WARC-Concurrent-To and WARC-Refers-To name a record of the files,
//     and a revisit's WARC-Payload-Digest, when it has one and names its
//     record with WARC-Refers-To, is that record's payload digest.
// Revisit records are listed with their WARC-Refers-To-* headers, for the
// replay checks.
import { WARCParser } from "warcio";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

// base32 is RFC 4648 base 32 without padding, as WARC digests write it.
function base32(buf) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let out = "", bits = 0, value = 0;
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

// digestMatches says whether a WARC digest header ("sha1:BASE32",
// "sha256:…", base 32 or hex) is the digest of data; why is set when not.
function digestMatches(header, data) {
  const m = /^(sha1|sha-1|sha256|sha-256):(.+)$/i.exec(header || "");
  if (!m) return { ok: false, why: `unknown digest ${JSON.stringify(header)}` };
  const raw = createHash(m[1].replace("-", "").toLowerCase()).update(data).digest();
  const got = m[2];
  const ok = got.toUpperCase() === base32(raw) || got.toLowerCase() === raw.toString("hex");
  return { ok, why: ok ? "" : `${header}, computed ${m[1]}:${base32(raw)}` };
}

// records reads the records of file with warcio.js, calling fn(record,
// offset) for each; parseHttp as WARCParser takes it.
async function records(file, parseHttp, fn) {
  const parser = new WARCParser(fs.createReadStream(file), { parseHttp, keepHeadersCase: true });
  for await (const record of parser) {
    await fn(record, parser.offset);
  }
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node checkwarc.mjs FILE.warc.gz ...");
  process.exit(2);
}
const out = { files: files.length, records: 0, types: {}, blockDigests: 0, payloadDigests: 0, references: 0, revisits: [], errors: [] };
const byID = new Map(); // WARC-Record-ID → {payloadDigest, where}
const refs = []; // {from, to, kind, payloadDigest}
const perFile = {};
for (const file of files) {
  const name = path.basename(file);
  let n = 0;
  try {
    // First the blocks, whole: framing and block digests.
    await records(file, false, async (rec, offset) => {
      n++;
      const where = `${name}@${offset} ${rec.warcType} ${rec.warcTargetURI || ""}`;
      const block = await rec.readFully(false);
      if (block.length !== rec.warcContentLength) {
        out.errors.push(`${where}: block of ${block.length} bytes, Content-Length ${rec.warcContentLength}`);
      }
      out.types[rec.warcType] = (out.types[rec.warcType] || 0) + 1;
      const id = rec.warcHeader("WARC-Record-ID");
      if (!id || byID.has(id)) out.errors.push(`${where}: WARC-Record-ID ${id} missing or not unique`);
      byID.set(id, { payloadDigest: rec.warcPayloadDigest, where });
      const bd = rec.warcBlockDigest;
      if (bd) {
        const d = digestMatches(bd, block);
        if (!d.ok) out.errors.push(`${where}: WARC-Block-Digest ${d.why}`);
        out.blockDigests++;
      } else if (rec.warcType !== "warcinfo") {
        out.errors.push(`${where}: no WARC-Block-Digest`);
      }
      for (const to of rec.warcConcurrentTo || []) refs.push({ from: where, to: to.trim(), kind: "WARC-Concurrent-To" });
      const refersTo = rec.warcHeader("WARC-Refers-To");
      if (refersTo) refs.push({ from: where, to: refersTo, kind: "WARC-Refers-To", payloadDigest: rec.warcType === "revisit" ? rec.warcPayloadDigest : "" });
      if (rec.warcType === "revisit") {
        out.revisits.push({ file: name, offset, url: rec.warcTargetURI, date: rec.warcDate, profile: rec.warcHeader("WARC-Profile") || "",
          refersTo: refersTo || "", refersToTargetURI: rec.warcRefersToTargetURI || "", refersToDate: rec.warcRefersToDate || "",
          payloadDigest: rec.warcPayloadDigest || "" });
      }
    });
    // Then the payloads, after the HTTP header as warcio.js parses it.
    await records(file, true, async (rec, offset) => {
      if (rec.warcType !== "response") return;
      const where = `${name}@${offset} response ${rec.warcTargetURI}`;
      const payload = await rec.readFully(false);
      const pd = rec.warcPayloadDigest;
      if (!pd) {
        out.errors.push(`${where}: no WARC-Payload-Digest`);
        return;
      }
      const d = digestMatches(pd, payload);
      if (!d.ok) out.errors.push(`${where}: WARC-Payload-Digest ${d.why}`);
      out.payloadDigests++;
    });
  } catch (e) {
    out.errors.push(`${name}: warcio.js cannot read it after ${n} records: ${e && e.stack || e}`);
  }
  perFile[name] = n;
  out.records += n;
}
for (const r of refs) {
  out.references++;
  const target = byID.get(r.to);
  if (!target) {
    out.errors.push(`${r.from}: ${r.kind} ${r.to} names no record of the files`);
  } else if (r.payloadDigest && target.payloadDigest !== r.payloadDigest) {
    out.errors.push(`${r.from}: WARC-Payload-Digest ${r.payloadDigest}, but the record it refers to (${target.where}) has ${target.payloadDigest}`);
  }
}
out.perFile = perFile;
console.log(JSON.stringify(out));
