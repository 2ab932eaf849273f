// Helpers of scripts/perfetto_check.mjs: what a Chrome trace event JSON file should import as,
// the SQL checks against Perfetto's trace processor, and that trace processor (the WASM build
// of the Perfetto UI, `engine_bundle.js` + `trace_processor*.wasm`) run directly under node.
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";

/// Reads a trace event JSON file; returns its bytes and what Perfetto should make of it:
/// slices (one per X event, B/E pair and i/I instant; per category and per (pid:tid)),
/// flows (one per s event), process/thread names from the M metadata, and the X/i events'
/// (thread, name, ts, dur) in ns (the JSON has us).
export function readExpectations(tracePath) {
  const bytes = fs.readFileSync(tracePath);
  const trace = JSON.parse(bytes.toString("utf8"));
  const events = Array.isArray(trace) ? trace : trace.traceEvents;
  const want = { events: events.length, slices: 0, flows: 0, unclosed: 0, byCat: {}, byThread: {},
    procs: {}, threads: {}, timed: [] };
  const open = {}; // B events per (pid, tid)
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph === "M" && e.name === "process_name") want.procs[e.pid] = e.args.name;
    if (e.ph === "M" && e.name === "thread_name") want.threads[key] = e.args.name;
    let cat = e.cat;
    let slice = e.ph === "X" || e.ph === "i" || e.ph === "I";
    if (e.ph === "B") (open[key] ||= []).push(e);
    if (e.ph === "E") { const b = (open[key] || []).pop(); if (b) { slice = true; cat = b.cat; } }
    if (e.ph === "s") want.flows++;
    if (!slice) continue;
    want.slices++;
    want.byCat[cat ?? ""] = (want.byCat[cat ?? ""] || 0) + 1;
    want.byThread[key] = (want.byThread[key] || 0) + 1;
    if (e.ph !== "E") want.timed.push({ key, name: e.name, ts: e.ts * 1000, dur: e.ph === "X" ? e.dur * 1000 : 0 });
  }
  for (const v of Object.values(open))
    for (const b of v) { // Perfetto keeps a B without E as a slice with dur -1
      want.unclosed++; want.slices++;
      want.byCat[b.cat ?? ""] = (want.byCat[b.cat ?? ""] || 0) + 1;
      want.byThread[`${b.pid}:${b.tid}`] = (want.byThread[`${b.pid}:${b.tid}`] || 0) + 1;
    }
  return { bytes, want };
}

/// Checks what the trace processor imported against `want` (see readExpectations).
/// `q(sql)` returns the rows as objects (numbers, strings, null). Reports with `log`, each
/// failed check with `fail`.
export async function checkImport(q, want, log, fail) {
  const stats = await q("select name, idx, severity, source, value from stats where value > 0 order by severity, name");
  const bad = stats.filter((s) => s.severity === "error" || s.severity === "data_loss");
  log(`stats (value > 0): ${stats.map((s) => `${s.name}[${s.severity}]=${s.value}`).join(", ") || "none"}`);
  if (bad.length) fail("import errors in stats: " + bad.map((s) => `${s.name}=${s.value}`).join(", "));

  const [{ n: slices }] = await q("select count(*) as n from slice");
  const [{ n: flows }] = await q("select count(*) as n from flow");
  log(`slices: ${slices} in the trace processor, ${want.slices} in the JSON`);
  if (slices !== want.slices) fail(`slice count ${slices} != ${want.slices}`);
  log(`flows: ${flows} in the trace processor, ${want.flows} in the JSON`);
  if (flows !== want.flows) fail(`flow count ${flows} != ${want.flows}`);
  const ends = await q(`select so.category || ':' || (case when so.dur = 0 then 'instant' else 'slice' end) as src,
      si.category || ':' || (case when si.dur = 0 then 'instant' else 'slice' end) as dst, count(*) as n,
      sum(si.ts < so.ts + so.dur) as back
    from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id group by 1, 2 order by 1, 2`);
  for (const f of ends)
    log(`  flows from ${f.src} to ${f.dst}: ${f.n} (of which ${f.back} end in a slice that starts ` +
        `before the source slice ends, drawn backwards in time)`);

  const cats = await q("select ifnull(category, '') as cat, count(*) as n from slice group by 1 order by 1");
  const gotCat = Object.fromEntries(cats.map((c) => [c.cat, c.n]));
  log(`slices per category: ${cats.map((c) => `${c.cat || "-"}=${c.n}`).join(", ")}`);
  for (const c of new Set([...Object.keys(gotCat), ...Object.keys(want.byCat)]))
    if ((gotCat[c] || 0) !== (want.byCat[c] || 0)) fail(`category ${c}: ${gotCat[c] || 0} slices != ${want.byCat[c] || 0} in JSON`);

  const procs = await q("select pid, name from process where pid != 0 order by pid");
  log(`processes: ${procs.map((p) => `${p.pid} ${JSON.stringify(p.name)}`).join("; ")}`);
  for (const [pid, name] of Object.entries(want.procs)) {
    const p = procs.find((x) => String(x.pid) === pid);
    if (!p || p.name !== name) fail(`process ${pid}: name ${p ? JSON.stringify(p.name) : "missing"} != ${JSON.stringify(name)}`);
  }
  const threads = await q(`select p.pid, t.tid, t.name as tname,
      (select count(*) from slice s join thread_track tt on s.track_id = tt.id where tt.utid = t.utid) as n
    from thread t left join process p using (upid) where t.tid != 0 order by t.tid`);
  log("threads (tid, name, slices on its tracks):");
  const byKey = {};
  for (const t of threads) {
    const key = `${t.pid}:${t.tid}`;
    byKey[key] = t;
    log(`  ${t.tid}  ${JSON.stringify(t.tname)}  ${t.n} slices (JSON ${want.byThread[key] || 0})`);
    if (t.n !== (want.byThread[key] || 0)) fail(`thread ${key}: ${t.n} slices != ${want.byThread[key] || 0} in JSON`);
  }
  for (const [key, name] of Object.entries(want.threads)) {
    const t = byKey[key];
    if (!t || t.tname !== name) fail(`thread ${key}: name ${t ? JSON.stringify(t.tname) : "missing"} != ${JSON.stringify(name)}`);
  }
  for (const key of Object.keys(want.byThread)) if (!byKey[key]) fail(`thread ${key} with slices is missing`);

  // Every X/i event, matched by (thread, name, ts, dur) within 1 ns.
  const rows = await q(`select p.pid, t.tid, s.name, s.ts, s.dur from slice s join thread_track tt on s.track_id = tt.id
    join thread t using (utid) left join process p using (upid)`);
  const got = new Map();
  for (const r of rows) {
    const k = `${r.pid}:${r.tid}\u0000${r.name}`;
    (got.get(k) || got.set(k, []).get(k)).push(r);
  }
  let matched = 0;
  const unmatched = [];
  for (const e of want.timed) {
    const list = got.get(`${e.key}\u0000${e.name}`) || [];
    const i = list.findIndex((r) => Math.abs(r.ts - e.ts) <= 1 && Math.abs(Math.max(r.dur, 0) - e.dur) <= 1);
    if (i >= 0) { list.splice(i, 1); matched++; } else unmatched.push(e);
  }
  log(`X/i events found in slice by (thread, name, ts, dur) within 1 ns: ${matched} of ${want.timed.length}`);
  if (unmatched.length) fail(`${unmatched.length} events not found, first: ${JSON.stringify(unmatched.slice(0, 3))}`);
}

// ---- protobuf, just what TraceProcessorRpc needs (protos/perfetto/trace_processor/
// trace_processor.proto: TraceProcessorRpcStream { repeated TraceProcessorRpc msg = 1; }) ----
function varint(n) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n));
  do { let b = Number(v & 0x7fn); v >>= 7n; if (v) b |= 0x80; out.push(b); } while (v);
  return out;
}
const tag = (field, wire) => varint((field << 3) | wire);
const fieldVarint = (field, v) => [...tag(field, 0), ...varint(v)];
const fieldBytes = (field, bytes) => [...tag(field, 2), ...varint(bytes.length), ...bytes];

/// Decodes one message into { field: [values] }: varints as BigInt, length-delimited as
/// Uint8Array, fixed64 as the 8 bytes.
function decode(buf) {
  const fields = {};
  let p = 0;
  const rd = () => { let v = 0n, s = 0n, b; do { b = buf[p++]; v |= BigInt(b & 0x7f) << s; s += 7n; } while (b & 0x80); return v; };
  while (p < buf.length) {
    const t = Number(rd()), f = t >> 3, w = t & 7;
    let v;
    if (w === 0) v = rd();
    else if (w === 2) { const n = Number(rd()); v = buf.subarray(p, p + n); p += n; }
    else if (w === 1) { v = buf.subarray(p, p + 8); p += 8; }
    else if (w === 5) { v = buf.subarray(p, p + 4); p += 4; }
    else throw new Error(`protobuf wire type ${w}`);
    (fields[f] ||= []).push(v);
  }
  return fields;
}
const packedVarints = (vals = []) => vals.flatMap((v) => {
  if (typeof v === "bigint") return [v];
  const out = [];
  let p = 0;
  while (p < v.length) { let x = 0n, s = 0n, b; do { b = v[p++]; x |= BigInt(b & 0x7f) << s; s += 7n; } while (b & 0x80); out.push(x); }
  return out;
});
const packedDoubles = (vals = []) => vals.flatMap((v) => {
  const dv = new DataView(v.buffer, v.byteOffset, v.length);
  return Array.from({ length: v.length / 8 }, (_, i) => dv.getFloat64(i * 8, true));
});
const utf8 = new TextDecoder();
const TPM = { APPEND_TRACE_DATA: 1, FINALIZE_TRACE_DATA: 2, QUERY_STREAMING: 3 };

/// Starts Perfetto's trace processor from a Perfetto UI build (`uiVersionDir`: the folder
/// with engine_bundle.js and trace_processor*.wasm) under node, without a browser: the
/// bundle runs in a vm context dressed as a web worker, the .wasm is read from disk, and the
/// RPC messages are the ones the UI sends to its engine worker. Returns
/// { wasm, load(bytes) -> Promise<void>, query(sql) -> Promise<rows> }.
export async function startTraceProcessor(uiVersionDir) {
  const base = "http://127.0.0.1/engine/engine_bundle.js";
  const local = (url) => path.join(uiVersionDir, path.basename(new URL(url, base).pathname));
  const loaded = [];
  class XMLHttpRequest { // synchronous fetches of the emscripten loader
    open(_m, url) { this.url = url; }
    setRequestHeader() {}
    overrideMimeType() {}
    send() { const b = fs.readFileSync(local(this.url)); loaded.push(path.basename(local(this.url)));
      this.response = b.buffer.slice(b.byteOffset, b.byteOffset + b.length); this.status = 200; }
  }
  const stderr = [];
  // The worker takes messages as soon as it has a port, but the module must be instantiated
  // (and its RPC buffer allocated, a moment later) before the first one: watch instantiation.
  let instantiated = false;
  const wasmApi = Object.create(WebAssembly);
  for (const f of ["instantiate", "instantiateStreaming"])
    wasmApi[f] = async (...a) => { const r = await WebAssembly[f](...a); setTimeout(() => { instantiated = true; }, 100); return r; };
  wasmApi.Instance = new Proxy(WebAssembly.Instance, { construct(T, a) {
    const r = new T(...a); setTimeout(() => { instantiated = true; }, 100); return r; } });
  const ctx = {
    console: { ...console, log: () => {}, warn: (m) => stderr.push(String(m)), error: (m) => stderr.push(String(m)) },
    WebAssembly: wasmApi, TextDecoder, TextEncoder, URL, Response, performance, setTimeout, clearTimeout,
    setInterval, clearInterval, queueMicrotask, crypto: globalThis.crypto,
    // Errors thrown by WebAssembly come from this realm; the loader tests `instanceof`.
    TypeError, RangeError, Error, Uint8Array, ArrayBuffer, // (and `e.data instanceof Uint8Array`)
    WorkerGlobalScope: class {}, XMLHttpRequest, location: { href: base },
    importScripts: () => { throw new Error("importScripts is not available"); },
    fetch: async (url) => { loaded.push(path.basename(local(url)));
      return new Response(fs.readFileSync(local(url)), { headers: { "Content-Type": "application/wasm" } }); },
  };
  ctx.self = ctx;
  vm.createContext(ctx);
  vm.runInContext(fs.readFileSync(path.join(uiVersionDir, "engine_bundle.js"), "utf8"), ctx, { filename: "engine_bundle.js" });

  let rxBuf = new Uint8Array(0);
  let waiter = null; // { resolve, reject, onMsg }
  const port = {
    onmessage: null,
    postMessage: (chunk) => { // TraceProcessorRpcStream bytes, possibly a part of a message
      const b = new Uint8Array(rxBuf.length + chunk.length);
      b.set(rxBuf); b.set(chunk, rxBuf.length); rxBuf = b;
      for (;;) { // frames of `msg = 1`
        let p = 0, len = 0n, s = 0n, byte;
        if (rxBuf.length < 2) break;
        if (rxBuf[p++] !== 0x0a) { waiter?.reject(new Error("bad RPC stream")); return; }
        do { if (p >= rxBuf.length) return; byte = rxBuf[p++]; len |= BigInt(byte & 0x7f) << s; s += 7n; } while (byte & 0x80);
        const end = p + Number(len);
        if (end > rxBuf.length) break;
        const msg = decode(rxBuf.subarray(p, end));
        rxBuf = rxBuf.slice(end);
        if (msg[5]) { waiter?.reject(new Error("trace processor fatal error: " + utf8.decode(msg[5][0]))); continue; }
        if (msg[4]) { waiter?.reject(new Error("trace processor: invalid request " + msg[4][0])); continue; }
        waiter?.onMsg(msg);
      }
    },
  };
  ctx.onmessage({ data: port });
  for (let i = 0; i < 1200 && !(port.onmessage && instantiated); i++) await new Promise((r) => setTimeout(r, 50));
  if (!port.onmessage || !instantiated) throw new Error("the trace processor WASM did not start in 60 s: " + stderr.slice(-5).join(" "));
  let seq = 0;
  const rpc = (method, argField, argBytes, onMsg) => new Promise((resolve, reject) => {
    waiter = { resolve, reject, onMsg: (m) => onMsg(m, resolve, reject) };
    const body = [...fieldVarint(1, seq++), ...fieldVarint(2, method), ...(argField ? fieldBytes(argField, argBytes) : [])];
    try { port.onmessage({ data: new Uint8Array(fieldBytes(1, body)) }); } catch (e) { reject(e); }
  });
  const query = async (sql) => {
    let cols = null;
    const rows = [];
    let cur = [];
    await rpc(TPM.QUERY_STREAMING, 103, [...fieldBytes(1, [...new TextEncoder().encode(sql)])], (m, resolve, reject) => {
      if (!m[203]) return;
      const r = decode(m[203][0]);
      if (r[2]) return reject(new Error(`query failed: ${utf8.decode(r[2][0])}\n  ${sql}`));
      if (r[1] && !cols) cols = r[1].map((c) => utf8.decode(c));
      let last = false;
      for (const bb of r[3] || []) {
        const b = decode(bb);
        const types = packedVarints(b[1]).map(Number);
        const ints = packedVarints(b[2]);
        const dbls = packedDoubles(b[3]);
        const strs = b[5] ? b[5].map((s) => utf8.decode(s)).join("").split("\u0000") : [];
        let vi = 0, di = 0, si = 0;
        for (const t of types) {
          let v = null;
          if (t === 2) v = Number(BigInt.asIntN(64, ints[vi++]));
          else if (t === 3) v = dbls[di++];
          else if (t === 4) v = strs[si++];
          else if (t === 5) v = "<blob>";
          cur.push(v);
          if (cur.length === cols.length) { rows.push(Object.fromEntries(cols.map((c, i) => [c, cur[i]]))); cur = []; }
        }
        if (b[6] && b[6][0]) last = true;
      }
      if (last) resolve();
    });
    return rows;
  };
  const load = async (bytes) => {
    for (let off = 0; off < bytes.length; off += 16 << 20) {
      await rpc(TPM.APPEND_TRACE_DATA, 101, bytes.subarray(off, off + (16 << 20)), (m, resolve, reject) => {
        if (!m[201]) return;
        const r = decode(m[201][0]);
        r[2] ? reject(new Error("trace processor rejected the trace: " + utf8.decode(r[2][0]))) : resolve();
      });
    }
    await rpc(TPM.FINALIZE_TRACE_DATA, 0, null, (m, resolve) => { if (Number(m[3]?.[0]) === TPM.FINALIZE_TRACE_DATA) resolve(); });
  };
  return { get wasm() { return [...new Set(loaded)].join(", "); }, stderr, load, query };
}
