// The interactive part of vramtrace's HTML report: the active memory timeline per device (one band
// per allocation, stacked by start), the composition at a chosen time (icicle graph and top call
// sites), pools and segments, search, keyboard, and the compare page. It reads the JSON of the
// element #vt-data (tools/export/html/page_data.cpp) and nothing else; it loads nothing.
//
// Every string of the snapshot reaches the page through textContent or canvas fillText, never
// as markup or through an attribute that the browser interprets, so a hostile name stays text.
(function () {
  'use strict';

  const FLAG_BEFORE = 1, FLAG_LIVE = 2, FLAG_TEARDOWN = 4;
  const CATEGORY_COLOURS = {
    parameter: '#4e79a7', optimizer_state: '#f28e2c', activation: '#59a14f', backward: '#e15759',
    library_workspace: '#af7aa1', communication: '#76b7b2', other: '#bab0ab'
  };
  const SMALL_COLOUR = '#9e9e9e', NO_RANGE_COLOUR = '#d0d0d0';
  const PLOT_HEIGHT = 220, AXIS_HEIGHT = 34, LEFT = 84, RIGHT = 28;
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
  function hashColour(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    return 'hsl(' + (h % 360) + ',' + (55 + (h >>> 9) % 30) + '%,' + (48 + (h >>> 17) % 18) + '%)';
  }
  function flameColour(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    return 'hsl(' + (10 + h % 40) + ',85%,' + (55 + (h >>> 8) % 15) + '%)';
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

  // ---- The timeline of one device ----
  class Timeline {
    constructor(parent, run, dev, offset, caption) {
      this.run = run; this.dev = dev; this.offset = offset;
      const box = el('div', 'vt-tl');
      box.dataset.device = dev.label;
      box.appendChild(el('h3', '', caption));
      const wrap = el('div', 'vt-canvas');
      this.base = el('canvas', 'vt-base');
      this.over = el('canvas', 'vt-over');
      wrap.appendChild(this.base);
      wrap.appendChild(this.over);
      box.appendChild(wrap);
      parent.appendChild(box);
      this.box = box;
      this.columns = null;
      this.drag = null;
      this.hover = null;
      this.over.addEventListener('mousemove', e => this.onMove(e));
      this.over.addEventListener('mouseleave', () => { this.hover = null; hideTip(); this.drawOverlay(); });
      this.over.addEventListener('mousedown', e => { this.drag = { x0: this.xOf(e), x1: this.xOf(e) }; e.preventDefault(); });
      this.over.addEventListener('mouseup', e => this.onUp(e));
      this.over.addEventListener('dblclick', () => resetView());
    }
    xOf(e) { const r = this.over.getBoundingClientRect(); return e.clientX - r.left; }
    yOf(e) { const r = this.over.getBoundingClientRect(); return e.clientY - r.top; }
    plotWidth() { return Math.max(10, this.width - LEFT - RIGHT); }
    timeAt(x) { const v = state.view; return v.t0 + (x - LEFT) / this.plotWidth() * (v.t1 - v.t0); }
    xAt(t) { const v = state.view; return LEFT + (t - v.t0) / (v.t1 - v.t0) * this.plotWidth(); }

    height() { return PLOT_HEIGHT + AXIS_HEIGHT + this.run.lanes * LANE_HEIGHT + (this.run.lanes ? 4 : 0); }
    resize() {
      const dpr = window.devicePixelRatio || 1;
      this.width = Math.max(300, this.box.clientWidth);
      const height = this.height();
      this.base.parentNode.style.height = height + 'px';
      for (const c of [this.base, this.over]) {
        c.width = Math.round(this.width * dpr);
        c.height = Math.round(height * dpr);
        c.style.width = this.width + 'px';
        c.style.height = height + 'px';
        c.getContext('2d').setTransform(dpr, 0, 0, dpr, 0, 0);
      }
    }
    // The NVTX interval drawn under a point of the lanes, or null.
    intervalAt(x, y) {
      const lane = Math.floor((y - PLOT_HEIGHT - AXIS_HEIGHT) / LANE_HEIGHT);
      if (lane < 0 || lane >= this.run.lanes) return null;
      const t = this.timeAt(x) + this.offset, slack = (state.view.t1 - state.view.t0) / this.plotWidth() * 2;
      let found = null;
      // The last one that covers the point: the innermost of those sharing the last lane.
      for (const v of this.run.intervalList) if (v.lane === lane && v.t0 - slack <= t && t <= v.t1 + slack) found = v;
      return found;
    }
    intervalText(v) {
      return 'NVTX interval: ' + v.name + '\n' + 'domain: ' + (v.domain || '(default domain)') + '\n' +
        'started at ' + fmtTime(v.t0 - this.offset) + ' on thread ' + v.thread0 + '\n' +
        (v.open ? 'still open at the dump (' + fmtTime(v.t1 - this.offset) + ')'
          : 'ended at ' + fmtTime(v.t1 - this.offset) + ' on thread ' + v.thread1 + ', lasted ' + fmtTime(v.t1 - v.t0));
    }
    drawIntervals(ctx) {
      const right = LEFT + this.plotWidth();
      ctx.font = '11px sans-serif';
      ctx.textAlign = 'left';
      for (const v of this.run.intervalList) {
        const x0 = Math.max(LEFT, this.xAt(v.t0 - this.offset)), x1 = Math.min(right, this.xAt(v.t1 - this.offset));
        if (x1 < LEFT || x0 > right) continue;
        const y = PLOT_HEIGHT + AXIS_HEIGHT + v.lane * LANE_HEIGHT, w = Math.max(1, x1 - x0);
        ctx.fillStyle = hashColour(v.domain + ':' + v.name);
        ctx.globalAlpha = v.open ? 0.55 : 0.85;
        ctx.fillRect(x0, y + 1, w, LANE_HEIGHT - 2);
        ctx.globalAlpha = 1;
        if (w > 12) {
          ctx.save();
          ctx.beginPath(); ctx.rect(x0, y, w, LANE_HEIGHT); ctx.clip();
          ctx.fillStyle = '#000';
          ctx.fillText(v.name.length > 200 ? v.name.slice(0, 199) + '…' : v.name, x0 + 3, y + LANE_HEIGHT - 4);
          ctx.restore();
        }
      }
    }

    // The live set at the right edge of each pixel column (so the last column is the dump, with
    // what was made just before it), stacked by start; bands under a pixel tall
    // are merged with their neighbours into one grey run (level of detail), so a column draws at
    // most one rectangle per pixel whatever the number of allocations.
    layout() {
      const dev = this.dev, W = Math.floor(this.plotWidth()), v = state.view;
      const span = v.t1 - v.t0;
      const cols = { start: new Int32Array(W + 1), band: [], y0: [], y1: [], total: new Float64Array(W), max: 0 };
      const live = [];
      let next = 0;
      // First pass: totals (for the scale); second: segments.
      const times = new Float64Array(W);
      for (let c = 0; c < W; c++) times[c] = v.t0 + (c + 1) / W * span + this.offset;
      // A band live at the dump shows in the column that holds the dump, even when it was made in
      // the dump's last nanoseconds (or, on a compare page, its run ends inside a column).
      const grace = span / W;
      const liveSets = [];
      for (let c = 0; c < W; c++) {
        const t = times[c];
        while (next < dev.n && dev.start[next] <= t) live.push(next++);
        let j = 0, total = 0;
        for (let i = 0; i < live.length; i++) {
          const b = live[i];
          if (dev.end[b] > t || ((dev.flags[b] & FLAG_LIVE) && dev.end[b] + grace >= t)) { live[j++] = b; total += dev.size[b]; }
        }
        live.length = j;
        cols.total[c] = total;
        if (total > cols.max) cols.max = total;
        liveSets.push(j ? Int32Array.from(live) : null);
      }
      const max = cols.max || 1, pxPerByte = PLOT_HEIGHT / max;
      for (let c = 0; c < W; c++) {
        cols.start[c] = cols.band.length;
        const set = liveSets[c];
        if (!set) continue;
        let acc = 0, smallFrom = -1, smallCount = 0;
        for (let i = 0; i < set.length; i++) {
          const b = set[i], s = dev.size[b];
          if (s * pxPerByte < 1) {
            if (smallFrom < 0) { smallFrom = acc; smallCount = 0; }
            smallCount++;
            acc += s;
            if ((acc - smallFrom) * pxPerByte >= 1) { cols.band.push(-smallCount); cols.y0.push(smallFrom); cols.y1.push(acc); smallFrom = -1; }
            continue;
          }
          if (smallFrom >= 0) { cols.band.push(-smallCount); cols.y0.push(smallFrom); cols.y1.push(acc); smallFrom = -1; }
          cols.band.push(b); cols.y0.push(acc); acc += s; cols.y1.push(acc);
        }
        if (smallFrom >= 0) { cols.band.push(-smallCount); cols.y0.push(smallFrom); cols.y1.push(acc); }
      }
      cols.start[W] = cols.band.length;
      cols.W = W;
      this.columns = cols;
    }

    bandColour(b) {
      const run = this.run, st = this.dev.stack[b];
      if (state.colourBy === 'range') return run.rangeColour[this.dev.range[b]];
      return state.colourBy === 'category' ? (CATEGORY_COLOURS[run.stackCategory[st]] || CATEGORY_COLOURS.other) : run.stackColour[st];
    }
    bandDimmed(b) {
      if (state.highlightLive && !(this.dev.flags[b] & FLAG_LIVE)) return true;
      return !stackMatches(this.run, this.dev.stack[b]);
    }

    draw() {
      this.resize();
      this.layout();
      const ctx = this.base.getContext('2d'), cols = this.columns, W = cols.W;
      ctx.clearRect(0, 0, this.width, this.height());
      const max = cols.max || 1, k = PLOT_HEIGHT / max;
      for (let c = 0; c < W; c++) {
        for (let s = cols.start[c]; s < cols.start[c + 1]; s++) {
          const b = cols.band[s];
          const y1 = PLOT_HEIGHT - cols.y1[s] * k, h = (cols.y1[s] - cols.y0[s]) * k;
          ctx.globalAlpha = b >= 0 && this.bandDimmed(b) ? 0.18 : 1;
          ctx.fillStyle = b < 0 ? SMALL_COLOUR : this.bandColour(b);
          ctx.fillRect(LEFT + c, y1, 1, Math.max(h, 1));
        }
      }
      ctx.globalAlpha = 1;
      // Axes.
      ctx.strokeStyle = '#888'; ctx.fillStyle = '#333'; ctx.font = '11px sans-serif';
      ctx.beginPath(); ctx.moveTo(LEFT - 0.5, 0); ctx.lineTo(LEFT - 0.5, PLOT_HEIGHT + 0.5); ctx.lineTo(LEFT + W, PLOT_HEIGHT + 0.5); ctx.stroke();
      ctx.textAlign = 'right';
      ctx.fillText(fmtBytes(max), LEFT - 4, 10);
      ctx.fillText(fmtBytes(max / 2), LEFT - 4, PLOT_HEIGHT / 2 + 4);
      ctx.fillText('0', LEFT - 4, PLOT_HEIGHT);
      const v = state.view, span = v.t1 - v.t0;
      const step = niceStep(span / 6);
      ctx.textAlign = 'center';
      for (let t = Math.ceil(v.t0 / step) * step; t <= v.t1; t += step) {
        const x = this.xAt(t);
        ctx.fillRect(x, PLOT_HEIGHT, 1, 4);
        ctx.fillText(fmtTime(t, step), x, PLOT_HEIGHT + 15);
      }
      // Marks (green), OOMs (red), the peak (red dot) on the time axis.
      this.axisItems = [];
      for (const m of this.run.markList) this.axisItem(ctx, m.t, '#2e7d32', 'mark "' + m.label + '" at ' + fmtTime(m.t - this.offset), m.label);
      for (const o of this.run.oomList) {
        if (o.device !== this.dev.device) continue;
        this.axisItem(ctx, o.t, '#c62828', 'out of memory: ' + o.api + ' asked for ' + fmtBytesExact(o.bytes) + ' at ' +
          fmtTime(o.t - this.offset) + ', ' + fmtBytesExact(o.tracked) + ' tracked then, thread ' + o.thread + '\n' +
          this.run.stackSite[o.stack], 'OOM');
      }
      // The dump itself; a snapshot written by VRAMTRACE_WARN_BYTES marks the threshold crossing.
      const r = this.run.reason;
      this.axisItem(ctx, this.run.end, '#555', (r === 'threshold' ? 'threshold crossed: snapshot' : 'snapshot') + ' (reason ' + r + ') at ' +
        fmtTime(this.run.end - this.offset), r === 'threshold' ? 'threshold' : 'dump');
      if (this.dev.peak_time !== undefined && this.dev.peak)
        this.axisItem(ctx, this.dev.peak_time, '#6a1b9a', 'peak ' + fmtBytesExact(this.dev.peak) + ' at ' + fmtTime(this.dev.peak_time - this.offset), 'peak');
      this.drawIntervals(ctx);
      this.drawOverlay();
    }
    axisItem(ctx, t, colour, text, label) {
      const x = this.xAt(t - this.offset);
      if (x < LEFT - 1 || x > LEFT + this.plotWidth() + 1) return;
      ctx.fillStyle = colour; ctx.strokeStyle = colour;
      ctx.beginPath(); ctx.moveTo(x, PLOT_HEIGHT + 18); ctx.lineTo(x - 4, PLOT_HEIGHT + 26); ctx.lineTo(x + 4, PLOT_HEIGHT + 26); ctx.fill();
      ctx.globalAlpha = 0.35; ctx.fillRect(x, 0, 1, PLOT_HEIGHT); ctx.globalAlpha = 1;
      ctx.textAlign = 'left';
      ctx.fillText(label.length > 24 ? label.slice(0, 23) + '…' : label, x + 5, PLOT_HEIGHT + 32);
      this.axisItems.push({ x: x, text: text });
    }

    drawOverlay() {
      const ctx = this.over.getContext('2d');
      ctx.clearRect(0, 0, this.width, this.height());
      const sel = state.selection;
      if (sel && sel.run === this.run && sel.device === this.dev.device && sel.t !== undefined) {
        const x = this.xAt(sel.t - this.offset);
        ctx.fillStyle = '#1565c0'; ctx.fillRect(x - 0.5, 0, 2, PLOT_HEIGHT);
      }
      if (this.drag && Math.abs(this.drag.x1 - this.drag.x0) > 2) {
        ctx.fillStyle = 'rgba(21,101,192,0.15)';
        ctx.fillRect(Math.min(this.drag.x0, this.drag.x1), 0, Math.abs(this.drag.x1 - this.drag.x0), PLOT_HEIGHT);
      }
      const p = state.pinned && state.pinned.timeline === this ? state.pinned.band : -1;
      for (const b of [this.hover && this.hover.band >= 0 ? this.hover.band : -1, p]) {
        if (b < 0) continue;
        const x0 = Math.max(LEFT, this.xAt(this.dev.start[b] - this.offset)), x1 = Math.min(LEFT + this.plotWidth(), this.xAt(this.dev.end[b] - this.offset));
        ctx.strokeStyle = b === p ? '#000' : '#333'; ctx.lineWidth = b === p ? 2 : 1;
        ctx.strokeRect(x0, 1, Math.max(1, x1 - x0), PLOT_HEIGHT - 2);
      }
    }

    // The band (or merged run) under a point: {band, count, bytes} or null.
    hit(x, y) {
      const cols = this.columns, c = Math.floor(x - LEFT);
      if (!cols || c < 0 || c >= cols.W || y > PLOT_HEIGHT) return null;
      const k = PLOT_HEIGHT / (cols.max || 1), bytes = (PLOT_HEIGHT - y) / k;
      for (let s = cols.start[c]; s < cols.start[c + 1]; s++) {
        if (bytes >= cols.y0[s] && bytes < cols.y1[s] + 1 / k) {
          const b = cols.band[s];
          return b >= 0 ? { band: b } : { band: -1, count: -b, bytes: cols.y1[s] - cols.y0[s] };
        }
      }
      return null;
    }

    bandText(b, limit) {
      const d = this.dev, run = this.run, st = d.stack[b], f = d.flags[b], raw = d.bands;
      const lines = [];
      lines.push(fmtBytesExact(d.size[b]) + ' on ' + d.label + ' at ' + raw.addr[b]);
      const api = run.strings[raw.api[b]];
      lines.push('api ' + (api || '(not recorded)') + ', stream ' + (run.strings[raw.stream[b]] || '(not recorded)') + ', thread ' + raw.thread[b]);
      lines.push((f & FLAG_BEFORE ? 'allocated before ' + fmtTime(d.start[b]) + ' (before the kept history)' : 'allocated at ' + fmtTime(d.start[b])) +
        (f & FLAG_LIVE ? ', still live at the dump (' + fmtTime(d.end[b]) + ')' : ', freed at ' + fmtTime(d.end[b]) +
          (f & FLAG_TEARDOWN ? ' by a context teardown' : '') + ', lived ' + fmtTime(d.end[b] - d.start[b])));
      lines.push('call site: ' + run.stackSite[st] + (run.stackVia[st] ? ' via ' + run.stackVia[st] : '') +
        (run.categories ? ' [' + run.stackCategory[st] + ']' : ''));
      if (run.nvtx) lines.push('NVTX range: ' + run.rangeLabel[d.range[b]]);
      lines.push('stack (leaf first):');
      for (const l of stackLines(run, st, limit)) lines.push('  ' + l);
      return lines.join('\n');
    }

    onMove(e) {
      const x = this.xOf(e), y = this.yOf(e);
      if (this.drag) { this.drag.x1 = x; this.drawOverlay(); return; }
      if (y > PLOT_HEIGHT) {
        this.hover = null;
        const interval = y >= PLOT_HEIGHT + AXIS_HEIGHT ? this.intervalAt(x, y) : null;
        const item = y < PLOT_HEIGHT + AXIS_HEIGHT ? (this.axisItems || []).find(a => Math.abs(a.x - x) <= 5) : null;
        if (interval) showTip(e, this.intervalText(interval));
        else if (item) showTip(e, item.text); else hideTip();
        this.drawOverlay();
        return;
      }
      const h = this.hit(x, y);
      this.hover = h;
      if (!h) hideTip();
      else if (h.band >= 0) showTip(e, this.bandText(h.band, TOOLTIP_FRAMES));
      else showTip(e, h.count + ' allocations under a pixel each, ' + fmtBytesExact(h.bytes) + ' in all at ' +
        fmtTime(this.timeAt(x)) + ' (zoom in to see them)');
      this.drawOverlay();
    }

    onUp(e) {
      if (!this.drag) return;
      const x0 = this.drag.x0, x1 = this.xOf(e);
      this.drag = null;
      if (Math.abs(x1 - x0) > 3) {
        const a = this.timeAt(Math.min(x0, x1)), b = this.timeAt(Math.max(x0, x1));
        setView(Math.max(a, state.full.t0), Math.min(b, state.full.t1));
        return;
      }
      // A click: the composition at that time, and the band under it pinned.
      const t = this.timeAt(x1) + this.offset;
      const h = this.hit(x1, this.yOf(e));
      state.pinned = h && h.band >= 0 ? { timeline: this, band: h.band } : null;
      showPinned();
      selectTime(this.run, this.dev, t);
    }
  }

  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // ---- Tooltip and pinned details ----
  let tip = null;
  function showTip(e, text) {
    tip.textContent = text;
    tip.style.display = 'block';
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let x = e.clientX + 14, y = e.clientY + 14;
    if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, e.clientY - h - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }
  function showPinned() {
    const box = document.getElementById('vt-pinned');
    if (!box) return;
    if (!state.pinned) { box.textContent = 'Click a band to pin its details here (Escape unpins).'; box.classList.remove('on'); }
    else { box.textContent = state.pinned.timeline.bandText(state.pinned.band); box.classList.add('on'); }
    for (const t of state.timelines) t.drawOverlay();
  }

  // ---- View (zoom) ----
  function setView(t0, t1) {
    if (!(t1 > t0)) return;
    state.view = { t0: t0, t1: t1 };
    const r = document.getElementById('vt-range');
    if (r) r.textContent = 'showing ' + fmtTime(t0, t1 - t0) + ' to ' + fmtTime(t1, t1 - t0) +
      (t0 === state.full.t0 && t1 === state.full.t1 ? ' (all)' : ' (drag to zoom, double-click to reset)');
    for (const t of state.timelines) t.draw();
  }
  function resetView() { setView(state.full.t0, state.full.t1); }
  function zoom(factor, centre) {
    const v = state.view, c = centre === undefined ? (v.t0 + v.t1) / 2 : centre;
    const half = (v.t1 - v.t0) * factor / 2;
    setView(Math.max(state.full.t0, c - half), Math.min(state.full.t1, c + half));
  }
  function pan(fraction) {
    const v = state.view, span = v.t1 - v.t0;
    let t0 = v.t0 + span * fraction;
    t0 = Math.max(state.full.t0, Math.min(state.full.t1 - span, t0));
    setView(t0, t0 + span);
  }

  // ---- Composition: icicle graph and top call sites ----
  let composition = null;
  function selectTime(run, dev, t, kind) {
    let weights, title;
    if (kind === 'peak') { weights = atPeak(dev); title = 'at the peak of ' + dev.label + ' (' + fmtTime(dev.peak_time) + ', exact, from the peak counters)'; }
    else if (kind === 'dump') { weights = liveAtDump(dev); title = 'at the dump on ' + dev.label + ' (' + fmtTime(run.end) + ')'; }
    else { weights = liveAt(dev, t); title = 'on ' + dev.label + ' at ' + fmtTime(t); }
    state.selection = { run: run, device: dev.device, t: kind === 'dump' ? run.end : t };
    if (data.mode === 'compare') title += ' in ' + data.names[runs.indexOf(run)];
    renderComposition(run, weights, title);
    for (const tl of state.timelines) tl.drawOverlay();
  }

  function buildTree(run, weights) {
    const root = { name: 'all', where: '', bytes: 0, count: 0, kids: new Map() };
    for (const [stack, w] of weights) {
      root.bytes += w.bytes; root.count += w.count;
      let node = root;
      const frames = run.stacks[stack][3];
      const path = frames.length ? frames.slice().reverse().map(f => run.frameText[f]) : ['(no stack captured)'];
      for (const name of path) {
        let k = node.kids.get(name);
        if (!k) { k = { name: name, bytes: 0, count: 0, kids: new Map() }; node.kids.set(name, k); }
        k.bytes += w.bytes; k.count += w.count;
        node = k;
      }
    }
    return root;
  }

  function renderComposition(run, weights, title) {
    const box = composition;
    if (!box) return;
    let total = 0, count = 0;
    for (const w of weights.values()) { total += w.bytes; count += w.count; }
    box.last = [run, weights, title];
    box.title.textContent = 'Live ' + title + ': ' + fmtBytesExact(total) + ' in ' + count + ' allocation' + (count === 1 ? '' : 's');
    box.tree = buildTree(run, weights);
    box.focus = box.tree;
    drawFlame(box);
    // Top call sites.
    const sites = new Map();
    for (const [stack, w] of weights) add(sites, run.stackSite[stack] + (run.stackVia[stack] ? ' via ' + run.stackVia[stack] : ''), w.bytes, w.count);
    const rows = Array.from(sites.entries()).sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1));
    const tbody = box.sites;
    tbody.textContent = '';
    for (const [site, w] of rows.slice(0, 25)) {
      const tr = el('tr');
      if (state.search && !site.toLowerCase().includes(state.search)) tr.className = 'dim';
      tr.appendChild(el('td', 'n', fmtBytesExact(w.bytes)));
      tr.appendChild(el('td', 'n', String(w.count)));
      tr.appendChild(el('td', 'n', (total ? (100 * w.bytes / total).toFixed(1) : '0.0') + '%'));
      tr.appendChild(el('td', 'site', shown(site)));
      tbody.appendChild(tr);
    }
    box.more.textContent = rows.length > 25 ? '... and ' + (rows.length - 25) + ' more call sites.' : '';
    // By NVTX range stack, for a run that has them.
    box.rangeSec.style.display = run.nvtx ? '' : 'none';
    box.ranges.textContent = '';
    if (run.nvtx && weights.ranges) {
      const byRange = Array.from(weights.ranges.entries()).sort((a, b) => b[1].bytes - a[1].bytes || a[0] - b[0]);
      for (const [r, w] of byRange) {
        const tr = el('tr');
        tr.appendChild(el('td', 'n', fmtBytesExact(w.bytes)));
        tr.appendChild(el('td', 'n', String(w.count)));
        tr.appendChild(el('td', 'n', (total ? (100 * w.bytes / total).toFixed(1) : '0.0') + '%'));
        tr.appendChild(el('td', 'site', shown(run.rangeLabel[r])));
        box.ranges.appendChild(tr);
      }
    }
  }

  function drawFlame(box) {
    const flame = box.flame, root = box.focus;
    flame.textContent = '';
    let depthMax = 0;
    const todo = [{ node: root, x: 0, w: 1, depth: 0 }];
    while (todo.length) {
      const it = todo.pop();
      const n = it.node;
      depthMax = Math.max(depthMax, it.depth);
      const div = el('div', 'fn', it.w * 1000 > 28 ? n.name : '');
      div.style.left = (100 * it.x) + '%';
      div.style.width = (100 * it.w) + '%';
      div.style.top = (it.depth * FLAME_ROW) + 'px';
      div.style.background = n === box.tree ? '#e0e0e0' : flameColour(n.name);
      if (state.search && n.name.toLowerCase().includes(state.search)) div.classList.add('hit');
      div.vtNode = n;
      flame.appendChild(div);
      if (it.depth + 1 >= FLAME_MAX_DEPTH) continue;
      const kids = Array.from(n.kids.values()).sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
      let x = it.x;
      const row = [];
      for (const k of kids) {
        const w = n.bytes ? it.w * k.bytes / n.bytes : 0;
        if (w * 1000 >= 0.3) row.push({ node: k, x: x, w: Math.min(w, it.x + it.w - x), depth: it.depth + 1 });
        x += w;
      }
      for (let i = row.length - 1; i >= 0; i--) todo.push(row[i]);
    }
    flame.style.height = ((depthMax + 1) * FLAME_ROW) + 'px';
  }

  function makeComposition(parent) {
    const sec = el('section', 'vt-comp');
    sec.appendChild(el('h2', '', 'Composition'));
    const title = el('p', 'vt-comp-title');
    title.id = 'vt-comp-title';
    sec.appendChild(title);
    const info = el('div', 'vt-info', ' ');
    info.id = 'vt-flame-info';
    sec.appendChild(info);
    const flame = el('div', 'vt-flame');
    flame.id = 'vt-flame';
    sec.appendChild(flame);
    sec.appendChild(el('h3', '', 'Top call sites of what was live then'));
    const table = el('table', 'vt-sites');
    const head = el('tr');
    for (const h of ['bytes', 'allocations', 'share', 'call site']) head.appendChild(el('th', '', h));
    table.appendChild(head);
    const tbody = el('tbody');
    tbody.id = 'vt-sites';
    table.appendChild(tbody);
    sec.appendChild(table);
    const more = el('p');
    sec.appendChild(more);
    const rangeSec = el('div', 'vt-by-range');
    rangeSec.appendChild(el('h3', '', 'By NVTX range'));
    const rtable = el('table', 'vt-sites');
    const rhead = el('tr');
    for (const h of ['bytes', 'allocations', 'share', 'NVTX range']) rhead.appendChild(el('th', '', h));
    rtable.appendChild(rhead);
    const rbody = el('tbody');
    rbody.id = 'vt-ranges';
    rtable.appendChild(rbody);
    rangeSec.appendChild(rtable);
    rangeSec.style.display = 'none';
    sec.appendChild(rangeSec);
    parent.appendChild(sec);
    const box = { title: title, flame: flame, sites: tbody, more: more, info: info, tree: null, focus: null, ranges: rbody, rangeSec: rangeSec };
    flame.addEventListener('mouseover', e => {
      const n = e.target.vtNode;
      if (!n) return;
      const total = box.tree.bytes || 1;
      info.textContent = n.name + ' — ' + fmtBytesExact(n.bytes) + ' (' + (100 * n.bytes / total).toFixed(1) + '%), ' + n.count + ' allocation' + (n.count === 1 ? '' : 's');
    });
    flame.addEventListener('click', e => {
      const n = e.target.vtNode;
      if (!n) return;
      box.focus = n === box.focus ? box.tree : n;
      drawFlame(box);
    });
    composition = box;
    return box;
  }

  // ---- Pools and segments ----
  function makePools(parent, run, caption) {
    const rows = [];
    for (const p of run.pools) rows.push(p);
    const vmm = run.devices.filter(d => d.vmm);
    const graph = run.devices.filter(d => d.graph);
    if (!rows.length && !vmm.length && !graph.length && !run.va_reserved) return;
    const sec = el('section', 'vt-pools');
    sec.appendChild(el('h2', '', 'Pools and segments' + (caption ? ' (' + caption + ')' : '')));
    if (rows.length) {
      const t = el('table');
      const h = el('tr');
      for (const c of ['device', 'pool', 'reserved', 'used', 'used / reserved', 'reserved high', 'used high']) h.appendChild(el('th', '', c));
      t.appendChild(h);
      for (const p of rows) {
        const tr = el('tr');
        tr.appendChild(el('td', '', p[0] === -1 ? 'host' : p[0] < -1 ? 'unknown' : 'cuda:' + p[0]));
        tr.appendChild(el('td', '', p[6] + (p[1] ? ' (default)' : '')));
        tr.appendChild(el('td', 'n', fmtBytesExact(p[2])));
        tr.appendChild(el('td', 'n', fmtBytesExact(p[3])));
        const bar = el('td');
        const outer = el('div', 'bar'), inner = el('div', 'fill');
        inner.style.width = (p[2] ? Math.min(100, 100 * p[3] / p[2]) : 0) + '%';
        outer.appendChild(inner); bar.appendChild(outer);
        bar.appendChild(el('span', '', ' ' + (p[2] ? (100 * p[3] / p[2]).toFixed(1) : '0.0') + '%'));
        tr.appendChild(bar);
        tr.appendChild(el('td', 'n', fmtBytesExact(p[4])));
        tr.appendChild(el('td', 'n', fmtBytesExact(p[5])));
        t.appendChild(tr);
      }
      sec.appendChild(t);
    }
    if (vmm.length || run.va_reserved) {
      sec.appendChild(el('h3', '', 'Virtual memory management (cuMemAddressReserve / cuMemCreate / cuMemMap)'));
      sec.appendChild(el('p', 'vt-va', 'Reserved address space (no device): ' + fmtBytesExact(run.va_reserved || 0)));
    }
    if (vmm.length) {
      const t = el('table');
      t.className = 'vt-vmm';
      const h = el('tr');
      for (const c of ['device', 'mapped', 'physical handles']) h.appendChild(el('th', '', c));
      t.appendChild(h);
      for (const d of vmm) {
        const tr = el('tr');
        tr.appendChild(el('td', '', d.label));
        for (const v of d.vmm) tr.appendChild(el('td', 'n', fmtBytesExact(v)));
        t.appendChild(tr);
      }
      sec.appendChild(t);
    }
    for (const d of graph) sec.appendChild(el('p', '', 'Graph memory pool of ' + d.label + ': ' + fmtBytesExact(d.graph[0]) + ' reserved, ' + fmtBytesExact(d.graph[1]) + ' used.'));
    parent.appendChild(sec);
  }

  // ---- Page ----
  function controls(parent) {
    const bar = el('div', 'vt-controls');
    const search = el('input');
    search.type = 'search'; search.id = 'vt-search'; search.placeholder = 'search function or file  ( / )';
    search.addEventListener('input', () => {
      state.search = search.value.trim().toLowerCase();
      for (const t of state.timelines) t.draw();
      if (composition && composition.last) renderComposition(...composition.last);
      const count = document.getElementById('vt-search-count');
      if (state.search) {
        let n = 0;
        for (const run of runs) for (let s = 0; s < run.stacks.length; s++) if (stackMatches(run, s)) n++;
        count.textContent = n + (n === 1 ? ' stack matches' : ' stacks match');
      } else count.textContent = '';
    });
    bar.appendChild(search);
    bar.appendChild(el('span', 'vt-count', '')).id = 'vt-search-count';
    const colour = el('select');
    colour.id = 'vt-colour';
    const colourings = [['site', 'colour by call site'], ['category', 'colour by category']];
    if (runs.some(r => r.nvtx)) colourings.push(['range', 'colour by NVTX range']);
    for (const [v, t] of colourings) {
      const o = el('option', '', t); o.value = v; colour.appendChild(o);
    }
    colour.addEventListener('change', () => { state.colourBy = colour.value; drawLegend(); for (const t of state.timelines) t.draw(); });
    bar.appendChild(colour);
    const live = el('label', '', ' highlight live at the dump (l)');
    const box = el('input'); box.type = 'checkbox'; box.id = 'vt-live';
    box.addEventListener('change', () => { state.highlightLive = box.checked; for (const t of state.timelines) t.draw(); });
    live.prepend(box);
    bar.appendChild(live);
    for (const [text, fn, id] of [['peak (p)', () => selectDefault('peak'), 'vt-peak'], ['dump (d)', () => selectDefault('dump'), 'vt-dump'], ['reset zoom (r)', resetView, 'vt-reset']]) {
      const b = el('button', '', text); b.id = id; b.addEventListener('click', fn); bar.appendChild(b);
    }
    bar.appendChild(el('span', 'vt-range', '')).id = 'vt-range';
    bar.appendChild(el('div', 'vt-keys', 'keys: drag zoom · double-click reset · ← → pan · + − zoom · / search · p peak · d dump · l live · Esc unpin'));
    parent.appendChild(bar);
  }

  // What the colours mean, for the colourings with few values: category and NVTX range stack
  // (those of the drawn bands, in first-seen order; "(no range)" last).
  function drawLegend() {
    const box = document.getElementById('vt-legend');
    if (!box) return;
    box.textContent = '';
    const entries = [];
    if (state.colourBy === 'category') {
      for (const c of Object.keys(CATEGORY_COLOURS)) entries.push([c, CATEGORY_COLOURS[c]]);
    } else if (state.colourBy === 'range') {
      for (const run of runs) {
        if (!run.nvtx) continue;
        const seen = new Set();
        for (const d of run.devices) for (let i = 0; i < d.n; i++) seen.add(d.range[i]);
        for (const r of Array.from(seen).sort((a, b) => (a === 0) - (b === 0) || a - b))
          if (!entries.some(e => e[0] === run.rangeLabel[r])) entries.push([run.rangeLabel[r], run.rangeColour[r]]);
      }
    }
    for (const [label, colour] of entries) {
      const item = el('span', 'vt-key');
      const swatch = el('span', 'vt-swatch');
      swatch.style.background = colour;
      item.appendChild(swatch);
      item.appendChild(el('span', 'vt-key-text', shown(label)));
      box.appendChild(item);
    }
  }

  function selectDefault(kind) {
    // The first GPU with a peak, else any device with one, else the first GPU, else the first device.
    for (const run of runs.slice().reverse()) {
      const devs = run.devices.filter(d => d.n || d.peak_sites);
      const dev = devs.find(d => d.device >= 0 && d.peak_sites && d.peak_sites.length) || devs.find(d => d.peak_sites && d.peak_sites.length) || devs.find(d => d.device >= 0) || devs[0];
      if (!dev) continue;
      if (kind === 'peak' && dev.peak_sites) selectTime(run, dev, dev.peak_time, 'peak');
      else selectTime(run, dev, run.end, 'dump');
      return;
    }
  }

  function keyboard() {
    document.addEventListener('keydown', e => {
      if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT')) {
        if (e.key === 'Escape') e.target.blur();
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const k = e.key;
      if (k === '/') { e.preventDefault(); document.getElementById('vt-search').focus(); }
      else if (k === 'Escape') { state.pinned = null; showPinned(); }
      else if (k === 'r') resetView();
      else if (k === 'p') selectDefault('peak');
      else if (k === 'd') selectDefault('dump');
      else if (k === 'l') { const b = document.getElementById('vt-live'); b.checked = !b.checked; b.dispatchEvent(new Event('change')); }
      else if (k === '+' || k === '=') zoom(0.5);
      else if (k === '-') zoom(2);
      else if (k === 'ArrowLeft') pan(-0.25);
      else if (k === 'ArrowRight') pan(0.25);
    });
  }

  // Compare: bytes per call site in each run, at the peak (summed over devices) or at the dump.
  function siteWeights(run, kind) {
    const out = new Map();
    for (const d of run.devices) {
      const w = kind === 'peak' ? atPeak(d) : liveAtDump(d);
      for (const [stack, v] of w) add(out, run.stackKey[stack], v.bytes, v.count);
    }
    return out;
  }
  function makeDiff(parent, base, cur) {
    const sec = el('section', 'vt-diff');
    sec.appendChild(el('h2', '', 'Difference by call site'));
    const pick = el('select'); pick.id = 'vt-diff-at';
    // Live at the dump first: what `vramtrace diff` compares.
    for (const [v, t] of [['dump', 'live at the dump'], ['peak', 'at each device\'s peak']]) { const o = el('option', '', t); o.value = v; pick.appendChild(o); }
    sec.appendChild(pick);
    const table = el('table');
    const head = el('tr');
    for (const h of ['change', 'base', 'new', 'allocations (base → new)', 'call site']) head.appendChild(el('th', '', h));
    table.appendChild(head);
    const tbody = el('tbody'); tbody.id = 'vt-diff';
    table.appendChild(tbody);
    sec.appendChild(table);
    function fill() {
      const a = siteWeights(base, pick.value), b = siteWeights(cur, pick.value);
      const keys = new Set([...a.keys(), ...b.keys()]);
      const rows = [];
      for (const k of keys) {
        const x = a.get(k) || { bytes: 0, count: 0 }, y = b.get(k) || { bytes: 0, count: 0 };
        rows.push({ site: k, base: x, cur: y, delta: y.bytes - x.bytes });
      }
      rows.sort((p, q) => q.delta - p.delta || (p.site < q.site ? -1 : 1));
      tbody.textContent = '';
      for (const r of rows) {
        const tr = el('tr', r.delta > 0 ? 'grown' : r.delta < 0 ? 'shrunk' : '');
        tr.appendChild(el('td', 'n', (r.delta > 0 ? '+' : r.delta < 0 ? '-' : '') + fmtBytesExact(Math.abs(r.delta))));
        tr.appendChild(el('td', 'n', fmtBytesExact(r.base.bytes)));
        tr.appendChild(el('td', 'n', fmtBytesExact(r.cur.bytes)));
        tr.appendChild(el('td', 'n', r.base.count + ' → ' + r.cur.count));
        tr.appendChild(el('td', 'site', shown(r.site)));
        tbody.appendChild(tr);
      }
    }
    pick.addEventListener('change', fill);
    fill();
    parent.appendChild(sec);
  }

  // Where the timelines of a compare line up: the first mark of the base whose label the new run
  // has too, else the starts.
  function alignment(base, cur) {
    for (const m of base.markList) {
      const other = cur.markList.find(n => n.label === m.label);
      if (other) return { base: m.t, cur: other.t, label: m.label };
    }
    return { base: 0, cur: 0, label: null };
  }

  // Milliseconds of each stage of the first view (docs/performance.md), from the page's start.
  const timing = { parsed: 0, decoded: 0, drawn: 0 };
  const data = JSON.parse(document.getElementById('vt-data').textContent);
  timing.parsed = performance.now();
  const runs = data.runs.map(decodeRun);
  timing.decoded = performance.now();

  function main() {
    const app = document.getElementById('vt-app');
    app.textContent = '';
    tip = el('div', 'vt-tip');
    tip.id = 'vt-tip';
    document.body.appendChild(tip);
    if (data.mode === 'compare') makeDiff(app, runs[0], runs[1]);
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r];
      for (const n of run.notes) app.appendChild(el('p', 'note', (runs.length > 1 ? data.names[r] + ': ' : '') + n));
    }
    controls(app);
    const tlSection = el('section', 'vt-timelines');
    tlSection.appendChild(el('h2', '', 'Active memory timeline'));
    tlSection.appendChild(el('div', 'vt-legend')).id = 'vt-legend';
    app.appendChild(tlSection);
    const pinned = el('pre', 'vt-pinned');
    pinned.id = 'vt-pinned';
    let offsets = runs.map(() => 0);
    if (data.mode === 'compare') {
      const a = alignment(runs[0], runs[1]);
      offsets = [a.base, a.cur];
      tlSection.appendChild(el('p', 'vt-align', a.label === null ? 'The two runs are aligned at their starts.' :
        'The two runs are aligned at their first shared mark "' + a.label + '" (time 0).'));
    }
    let t0 = Infinity, t1 = -Infinity;
    runs.forEach((run, r) => { t0 = Math.min(t0, -offsets[r]); t1 = Math.max(t1, run.end - offsets[r]); });
    state.full = { t0: t0, t1: t1 > t0 ? t1 : t0 + 1 };
    state.view = state.full;
    const ordinals = Array.from(new Set(runs.flatMap(r => r.devices.map(d => d.device)))).sort((a, b) => (a >= 0 ? a : 1e6 - a) - (b >= 0 ? b : 1e6 - b));
    if (!ordinals.length) tlSection.appendChild(el('p', '', 'No tracked memory.'));
    for (const o of ordinals) {
      runs.forEach((run, r) => {
        const dev = run.devices.find(d => d.device === o);
        if (!dev) return;
        const caption = (runs.length > 1 ? data.names[r] + ': ' : '') + dev.label + (dev.peak ? ', peak ' + fmtBytesExact(dev.peak) : '') +
          ', ' + dev.n + ' allocation' + (dev.n === 1 ? '' : 's') + ' drawn';
        state.timelines.push(new Timeline(tlSection, run, dev, offsets[r], caption));
      });
    }
    tlSection.appendChild(pinned);
    makeComposition(app);
    runs.forEach((run, r) => makePools(app, run, runs.length > 1 ? data.names[r] : ''));
    keyboard();
    showPinned();
    resetView();
    selectDefault('peak');
    let pending = 0;
    window.addEventListener('resize', () => { clearTimeout(pending); pending = setTimeout(() => { for (const t of state.timelines) t.draw(); }, 100); });
    timing.drawn = performance.now();
    document.body.dataset.ready = '1';
  }

  // For the tests and for scripting the page: read-only views of the state, no entry for data.
  window.vramtraceViewer = {
    view: () => ({ t0: state.view.t0, t1: state.view.t1 }),
    full: () => ({ t0: state.full.t0, t1: state.full.t1 }),
    // Page coordinates of time t (ns) and bytes height b on timeline i.
    point: (i, t, bytes) => {
      const tl = state.timelines[i];
      tl.box.scrollIntoView({ block: 'center' });
      const r = tl.over.getBoundingClientRect();
      const k = PLOT_HEIGHT / (tl.columns.max || 1);
      return { x: r.left + tl.xAt(t - tl.offset), y: r.top + PLOT_HEIGHT - bytes * k };
    },
    timing: () => Object.assign({}, timing),
    formatBytes: (b) => fmtBytes(b),
    // Page coordinates of the middle of NVTX interval k's span (in start order) on timeline i.
    intervalPoint: (i, k) => {
      const tl = state.timelines[i], v = tl.run.intervalList[k];
      tl.box.scrollIntoView({ block: 'center' });
      const r = tl.over.getBoundingClientRect();
      const x0 = Math.max(LEFT, tl.xAt(v.t0 - tl.offset)), x1 = Math.min(LEFT + tl.plotWidth(), tl.xAt(v.t1 - tl.offset));
      return { x: r.left + (x0 + x1) / 2, y: r.top + PLOT_HEIGHT + AXIS_HEIGHT + v.lane * LANE_HEIGHT + LANE_HEIGHT / 2 };
    },
    intervals: i => state.timelines[i].run.intervalList.map(v => [v.name, v.lane]),
    peakTime: i => state.timelines[i].dev.peak_time,
    // The middle of the first band of timeline i (in start order) whose stack has a frame matching
    // the regular expression, as {t, bytes} at the band's start column; null when none.
    bandWhere: (i, pattern) => {
      const tl = state.timelines[i], d = tl.dev, run = tl.run, re = new RegExp(pattern);
      for (let b = 0; b < d.n; b++) {
        if (!run.stacks[d.stack[b]][3].some(f => re.test(run.frameText[f]))) continue;
        const t = (d.start[b] + d.end[b]) / 2, cols = tl.columns;
        const c = Math.floor((t - tl.offset - state.view.t0) / (state.view.t1 - state.view.t0) * cols.W);
        for (let s = cols.start[c]; s < cols.start[c + 1]; s++)
          if (cols.band[s] === b) return { t: t, bytes: (cols.y0[s] + cols.y1[s]) / 2 };
      }
      return null;
    },
    // Milliseconds to draw every timeline once more (a zoom or a pan costs this).
    redraw: () => { const t = performance.now(); for (const tl of state.timelines) tl.draw(); return performance.now() - t; },
    timelines: () => state.timelines.map(t => ({ device: t.dev.label, bands: t.dev.n, max: t.columns ? t.columns.max : 0 }))
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main); else main();
})();
