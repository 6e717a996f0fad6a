// replay.mjs JOB.json: opens pages in ReplayWeb.page, in headless
// Chromium driven by puppeteer-core, and reads what each shows; prints one
// JSON object a line on stdout, one per page, and exits 0 (2 on bad
// arguments, 1 when the browser cannot be started). Run by
// scripts/archtools_test.go (TestArchiveTools), which serves the pages and
// compares the texts.
//
// JOB.json: {"chromium": PATH, "args": [chromium flags, --headless among
// them], "timeoutMs": N, "pages": [{"id", "replay", "ref", "want"}]}:
//   replay  a page holding <replay-web-page source=… url=… ts=…>;
//   want    the URL the replayed page must end at (a redirect's target);
//   ref     the same page served as the test web sent it at capture time.
// Out, per page: {"id", "frame" (the replay frame's URL), "text" (its
// document.body.innerText), "ref" (the reference's), "ms", "error"}.
import puppeteer from "puppeteer-core";
import fs from "node:fs";

if (process.argv.length !== 3) {
  console.error("usage: node replay.mjs JOB.json");
  process.exit(2);
}
const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The replayed page is the frame whose URL names a capture ("…/20261207170247mp_/http://…")
// inside ReplayWeb.page's own frame: ReplayWeb.page nests the replay app
// in an iframe, and the app the archived page in another; the page's own
// iframes are one level further down.
function replayFrame(page) {
  for (const f of page.frames()) {
    const parent = f.parentFrame();
    if (parent && f.url().includes("mp_/") && !parent.url().includes("mp_/")) return f;
  }
  return null;
}

// bodyText is document.body.innerText once the document is complete, or
// null.
async function bodyText(frame) {
  try {
    return await frame.evaluate(() => (document.readyState === "complete" && document.body ? document.body.innerText : null));
  } catch {
    return null; // navigating: the frame's context is gone
  }
}

async function replay(tab, p) {
  await tab.goto(p.replay, { waitUntil: "load", timeout: job.timeoutMs });
  const deadline = Date.now() + job.timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const f = replayFrame(tab);
    if (f) {
      last = f.url();
      if (decodeURI(last).endsWith("mp_/" + decodeURI(p.want))) {
        const text = await bodyText(f);
        if (text !== null) return { frame: last, text };
      }
    }
    await sleep(50);
  }
  const frames = tab.frames().map((f) => f.url() || "(no URL: a navigation that did not commit)");
  throw new Error(`no replay of ${p.want} within ${job.timeoutMs} ms (replay frame: ${last || "none"}; frames: ${frames.join(" ")})`);
}

async function reference(tab, p) {
  await tab.goto(p.ref, { waitUntil: "load", timeout: job.timeoutMs });
  return await tab.evaluate(() => (document.body ? document.body.innerText : ""));
}

let browser;
try {
  // headless: false because job.args carry --headless (and the profile
  // directory) already: the flags are the Go tests' one list.
  browser = await puppeteer.launch({ executablePath: job.chromium, headless: false, args: job.args, timeout: job.timeoutMs });
} catch (e) {
  console.error(`cannot start ${job.chromium}: ${e && e.message}`);
  process.exit(1);
}
const replayTab = await browser.newPage();
const refTab = await browser.newPage();
for (const p of job.pages) {
  const t0 = Date.now();
  const out = { id: p.id, frame: "", text: "", ref: "", ms: 0, error: "" };
  try {
    Object.assign(out, await replay(replayTab, p));
    out.ref = await reference(refTab, p);
  } catch (e) {
    out.error = String(e && e.message || e);
  }
  out.ms = Date.now() - t0;
  console.log(JSON.stringify(out));
}
await browser.close();
