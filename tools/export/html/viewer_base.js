// The interactive part of vramtrace's HTML report: the active memory timeline per device (one band
// per allocation, stacked by start), the composition at a chosen time (icicle graph and top call
// sites), pools and segments, search, keyboard, and the compare page. It reads the JSON of the
// element #vt-data (tools/export/html/page_data.cpp) and nothing else; it loads nothing.
//
// This file opens the viewer's one function scope; embed_assets.cmake appends viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, which closes it.
//
// Every string of the snapshot reaches the page through textContent or canvas fillText, never
// as markup or through an attribute that the browser interprets, so a hostile name stays text.
(function () {
  'use strict';

  const FLAG_BEFORE = 1, FLAG_LIVE = 2, FLAG_TEARDOWN = 4;
  // Frame flags (page_data.cpp): the frame rules' groups, for "hide runtime frames".
  const FRAME_PYTHON = 2, FRAME_RUNTIME = 4, FRAME_CPYTHON = 8;
  const CATEGORY_COLOURS = {
    parameter: '#4e79a7', optimizer_state: '#f28e2c', activation: '#59a14f', backward: '#e15759',
    library_workspace: '#af7aa1', communication: '#76b7b2', other: '#bab0ab'
  };
  const SMALL_COLOUR = '#9e9e9e', NO_RANGE_COLOUR = '#d0d0d0';
  // The axis under a timeline: ticks, the markers (marks, OOMs, peak, dump), then their labels
  // in LABEL_LANES lanes of LABEL_LANE px.
  const LABEL_LANES = 3, LABEL_LANE = 12;
  const PLOT_HEIGHT = 220, AXIS_HEIGHT = 36 + (LABEL_LANES - 1) * LABEL_LANE, LEFT = 84, RIGHT = 28;
  // NVTX start/end intervals below the time axis: one lane per level of overlap, at most MAX_LANES
  // (deeper ones share the last lane).
  const LANE_HEIGHT = 15, MAX_LANES = 8;
  const TOOLTIP_FRAMES = 40;
  const FLAME_ROW = 18, FLAME_MAX_DEPTH = 514;

  // ---- Text helpers ----
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  // As the CLI's format_bytes: hundredths of the unit rounded half up on the exact byte count
  // (BigInt: no binary-fraction rounding), the next unit once a value rounds to 1024 of this one.
  function fmtBytes(b) {
    if (!(b >= 1024)) return Math.round(b) + ' B';
    const n = BigInt(Math.round(b));
    let unit = 1, divisor = 1024n;
    for (;;) {
      const scaled = (n * 100n + divisor / 2n) / divisor;
      if (scaled < 102400n || unit === UNITS.length - 1) {
        return (scaled / 100n) + '.' + String(scaled % 100n).padStart(2, '0') + ' ' + UNITS[unit];
      }
      unit++;
      divisor *= 1024n;
    }
  }
  // The exact count only where a double holds it exactly (sizes past 2^53 come from hostile files).
  function fmtBytesExact(b) { return b < 1024 || b > Number.MAX_SAFE_INTEGER ? fmtBytes(b) : fmtBytes(b) + ' (' + Math.round(b) + ' B)'; }
  // A call site as a table shows it: a hostile 100,000-character name is cut (the hover, the pinned
  // stack and the flame graph keep it whole).
  function shown(text) {
    return text.length > 2000 ? text.slice(0, 2000) + '… (' + (text.length - 2000) + ' more characters)' : text;
  }
  function fmtTime(ns, span) {
    const s = span === undefined ? Math.abs(ns) : span;
    if (s >= 1e10) return (ns / 1e9).toFixed(2) + ' s';
    if (s >= 1e8) return (ns / 1e9).toFixed(3) + ' s';
    if (s >= 1e5) return (ns / 1e6).toFixed(3) + ' ms';
    if (s >= 1e2) return (ns / 1e3).toFixed(3) + ' µs';
    return Math.round(ns) + ' ns';
  }
  // Colours as #rrggbb, so that a swatch, a band's pixels and a flame graph node of one key are the
  // same three bytes (the browser rounds an hsl() colour on its own).
  function hslHex(h, s, l) {
    s /= 100; l /= 100;
    const f = n => {
      const k = (n + h / 30) % 12, a = s * Math.min(l, 1 - l);
      const v = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
      return Math.round(255 * v).toString(16).padStart(2, '0');
    };
    return '#' + f(0) + f(8) + f(4);
  }
  function textHash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    return h;
  }
  // The colour of a key (a call site, a range stack): the same wherever the key is drawn.
  function hashColour(text) {
    const h = textHash(text);
    return hslHex(h % 360, 55 + (h >>> 9) % 30, 48 + (h >>> 17) % 18);
  }
  // Frames of the flame graph that are not a call site: warm, pale, so the sites stand out.
  function flameColour(text) {
    const h = textHash(text);
    return hslHex(20 + h % 30, 60, 78 + (h >>> 8) % 10);
  }

  // ---- Data ----
  // One run (snapshot): strings, frames and stacks as tables; per device the bands as typed arrays.
  function decodeRun(raw) {
    const run = raw;
    const S = raw.strings;
    run.frameText = raw.frames.map(f => {
      let t = S[f[0]];
      if (S[f[1]]) t += ' at ' + S[f[1]] + (f[2] ? ':' + f[2] : '');
      if (f[3] & 1) t += ' (inlined)';
      if (f[3] & 2) t += ' (python)';
      return t;
    });
    run.stackSite = raw.stacks.map(s => S[s[0]]);
    // The key `vramtrace diff` matches call sites by across runs (tools/analysis/call_sites.h).
    run.stackKey = raw.stacks.map(s => S[s[4]]);
    run.stackCategory = raw.stacks.map(s => S[s[1]] || 'other');
    run.stackVia = raw.stacks.map(s => S[s[2]]);
    run.stackColour = raw.stacks.map(s => hashColour(S[s[0]]));
    // Where each stack's call-site frame is among its frames (-1: none), and whether it has Python
    // frames (the interpreter's C frames are hidden only in those).
    run.stackSiteAt = raw.stacks.map(s => s.length > 5 ? s[5] : -1);
    run.stackPython = raw.stacks.map(s => s[3].some(f => raw.frames[f][3] & FRAME_PYTHON));
    // NVTX range stacks (page_data.cpp): index 0 is "(no range)"; absent when the snapshot has none.
    run.nvtx = Array.isArray(raw.ranges);
    run.rangeLabel = run.nvtx ? raw.ranges.map(i => S[i]) : ['(no range)'];
    run.rangeColour = run.rangeLabel.map((l, i) => i === 0 ? NO_RANGE_COLOUR : hashColour(l));
    run.markList = raw.marks.map(m => ({ t: m[0], label: S[m[1]] }));
    // NVTX start/end intervals (page_data.cpp), start ascending, each in the first lane where the
    // interval before it has ended.
    run.intervalList = (raw.intervals || []).map(v => ({ t0: v[0], t1: v[1], name: S[v[2]], domain: S[v[3]], thread0: v[4], thread1: v[5], open: v[6] === 1 }));
    run.intervalList.sort((a, b) => a.t0 - b.t0);
    const laneEnd = [];
    for (const v of run.intervalList) {
      let lane = laneEnd.findIndex(e => e <= v.t0);
      if (lane < 0) lane = laneEnd.length < MAX_LANES ? laneEnd.length : MAX_LANES - 1;
      laneEnd[lane] = Math.max(laneEnd[lane] || 0, v.t1);
      v.lane = lane;
    }
    run.lanes = laneEnd.length;
    run.oomList = raw.ooms.map(o => ({ t: o[0], device: o[1], bytes: o[2], stack: o[3], api: S[o[4]], thread: o[5], tracked: o[6] }));
    for (const d of raw.devices) {
      const b = d.bands, n = b.t0.length;
      const start = new Float64Array(n), end = new Float64Array(n), size = new Float64Array(n);
      let t = 0;
      for (let i = 0; i < n; i++) {
        t += b.t0[i];
        start[i] = t;
        end[i] = t + b.dur[i];
        size[i] = b.size[i];
      }
      d.n = n;
      d.start = start; d.end = end; d.size = size;
      d.stack = Int32Array.from(b.stack);
      d.flags = Uint8Array.from(b.flags);
      d.range = b.range ? Int32Array.from(b.range) : new Int32Array(n);
      d.run = run;
    }
    return run;
  }

  // The stack of a stack index as lines, leaf first; `limit` lines at most, then a count.
  function stackLines(run, stack, limit) {
    const frames = run.stacks[stack][3];
    if (!frames.length) return ['(no stack captured)'];
    const lines = [];
    for (let i = 0; i < frames.length; i++) {
      if (limit !== undefined && i === limit) { lines.push('... ' + (frames.length - i) + ' more frames'); break; }
      lines.push(run.frameText[frames[i]]);
    }
    return lines;
  }

  // What was live on a device at time t, by stack: Map stack -> {bytes, count}.
  // The maps also carry `ranges`: Map range index -> {bytes, count} of the same allocations.
  function liveAt(dev, t) {
    const out = new Map();
    out.ranges = new Map();
    for (let i = 0; i < dev.n && dev.start[i] <= t; i++) {
      // A band still live at the dump counts at the dump's own time too.
      if (dev.end[i] > t || ((dev.flags[i] & FLAG_LIVE) && dev.end[i] >= t)) { add(out, dev.stack[i], dev.size[i], 1); add(out.ranges, dev.range[i], dev.size[i], 1); }
    }
    return out;
  }
  function liveAtDump(dev) {
    const out = new Map();
    out.ranges = new Map();
    for (let i = 0; i < dev.n; i++) if (dev.flags[i] & FLAG_LIVE) { add(out, dev.stack[i], dev.size[i], 1); add(out.ranges, dev.range[i], dev.size[i], 1); }
    return out;
  }
  // The peak from the peak counters: by range from peaks[].ranges; a device without them had no
  // range open in any allocation live at its peak, so all of it is "(no range)".
  function atPeak(dev) {
    const out = new Map();
    out.ranges = new Map();
    for (const s of dev.peak_sites || []) add(out, s[0], s[1], s[2]);
    if (dev.peak_ranges) for (const r of dev.peak_ranges) add(out.ranges, r[0], r[1], r[2]);
    else for (const w of out.values()) add(out.ranges, 0, w.bytes, w.count);
    return out;
  }
  function add(map, key, bytes, count) {
    const w = map.get(key);
    if (w) { w.bytes += bytes; w.count += count; } else map.set(key, { bytes: bytes, count: count });
  }

  // ---- State shared by the page ----
  const state = {
    view: null, full: null,        // visible time range, in aligned time (ns)
    timelines: [],
    search: '',
    highlightLive: false,
    colourBy: 'site',
    flameOrder: 'root',            // 'root': root first; 'leaf': call sites first
    hideRuntime: true,             // flame graph without vramtrace/CUDA/libc start-up frames
    pythonOnly: false,             // flame graph of Python frames only
    fromStart: false,              // the time axis from the process start, not the first allocation
    align: 'first',                // compare: 'first' allocations, 'start', or 'mark:N' (sharedMarks)
    selection: null,               // {timeline, t, label}
    pinned: null                   // {timeline, band}
  };

  function stackMatches(run, stack) {
    if (!state.search) return true;
    if (!run.searchCache || run.searchCache.q !== state.search) {
      const q = state.search;
      const frameHit = run.frames.map(f => (run.strings[f[0]] + ' ' + run.strings[f[1]]).toLowerCase().includes(q));
      run.searchCache = { q: q, hits: run.stacks.map(s => s[3].some(f => frameHit[f]) || run.strings[s[0]].toLowerCase().includes(q)) };
    }
    return run.searchCache.hits[stack];
  }

