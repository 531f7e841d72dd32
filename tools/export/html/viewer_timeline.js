// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the active memory timeline of one device: bands, axes, marks, hover.

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
      // The vertical scale: round ticks whose top is at or above the highest column and, when it
      // lies in view, the device's peak from the counters (a column samples its right edge, so it
      // can miss the peak); on a compare page one scale for both runs of a device.
      let want = cols.max;
      const pt = dev.peak_time === undefined ? NaN : dev.peak_time - this.offset;
      if (dev.peak && pt >= v.t0 && pt <= v.t1) want = Math.max(want, dev.peak);
      if (this.shared) want = Math.max(want, this.shared.want);
      cols.want = want;
      cols.scale = byteTicks(want);
      cols.top = cols.scale.top;
      const pxPerByte = PLOT_HEIGHT / cols.top;
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
      this.paint();
    }
    paint() {
      const ctx = this.base.getContext('2d'), cols = this.columns, W = cols.W;
      ctx.clearRect(0, 0, this.width, this.height());
      const k = PLOT_HEIGHT / cols.top;
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
      for (const tick of cols.scale.ticks) {
        const y = PLOT_HEIGHT - tick.bytes * k;
        ctx.fillText(tick.label, LEFT - 4, Math.max(10, Math.min(PLOT_HEIGHT, y + 4)));
        if (tick.bytes) { ctx.globalAlpha = 0.15; ctx.fillRect(LEFT, Math.round(y), W, 1); ctx.globalAlpha = 1; }
      }
      const v = state.view, span = v.t1 - v.t0;
      const step = niceStep(span / 6);
      ctx.textAlign = 'center';
      for (let t = Math.ceil(v.t0 / step) * step; t <= v.t1; t += step) {
        const x = this.xAt(t);
        ctx.fillRect(x, PLOT_HEIGHT, 1, 4);
        // A label centred on its tick, moved in where it would pass the canvas's edge.
        const label = fmtTime(t, step), half = ctx.measureText(label).width / 2;
        ctx.fillText(label, Math.min(x, this.width - 1 - half), PLOT_HEIGHT + 15);
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
      this.placeLabels(ctx);
      this.drawIntervals(ctx);
      this.drawOverlay();
    }
    axisItem(ctx, t, colour, text, label) {
      const x = this.xAt(t - this.offset);
      if (x < LEFT - 1 || x > LEFT + this.plotWidth() + 1) return;
      ctx.fillStyle = colour; ctx.strokeStyle = colour;
      ctx.beginPath(); ctx.moveTo(x, PLOT_HEIGHT + 18); ctx.lineTo(x - 4, PLOT_HEIGHT + 26); ctx.lineTo(x + 4, PLOT_HEIGHT + 26); ctx.fill();
      ctx.globalAlpha = 0.35; ctx.fillRect(x, 0, 1, PLOT_HEIGHT); ctx.globalAlpha = 1;
      this.axisItems.push({ x: x, text: text, label: label, colour: colour });
    }
    // The labels of the axis items in LABEL_LANES lanes under the markers, left to right: each in
    // the first lane where it clears the label before it, right of its marker or, where that
    // would pass the canvas's edge, left of it. A label that would reach past the marker
    // LABEL_LANES places on is elided ("…") to end before it, so that the lanes take turns; one
    // that still fits no lane is left out. The label's box and its marker hover the whole text.
    // So no two labels overlap and none is cut at the edge.
    placeLabels(ctx) {
      ctx.font = '11px sans-serif';
      ctx.textAlign = 'left';
      const edge = this.width - 2, laneEnd = new Array(LABEL_LANES).fill(-Infinity);
      this.labelBoxes = [];
      const items = this.axisItems.slice().sort((a, b) => a.x - b.x);
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        let text = it.label.length > 24 ? it.label.slice(0, 23) + '…' : it.label;
        const ahead = items[i + LABEL_LANES];
        if (ahead) {
          const room = ahead.x + 5 - 4 - (it.x + 5);
          while (text.length > 2 && ctx.measureText(text).width > room) text = text.replace(/…?$/, '').slice(0, -1) + '…';
        }
        const w = ctx.measureText(text).width;
        let x0 = it.x + 5;
        if (x0 + w > edge) x0 = Math.max(0, it.x - 5 - w);
        const lane = laneEnd.findIndex(end => x0 >= end + 4);
        if (lane < 0 || (ahead && x0 + w > ahead.x + 1 && x0 > it.x)) continue;
        laneEnd[lane] = x0 + w;
        const base = PLOT_HEIGHT + 32 + lane * LABEL_LANE;
        ctx.fillStyle = it.colour;
        ctx.fillText(text, x0, base);
        this.labelBoxes.push({ x0: x0, x1: x0 + w, y0: base - 10, y1: base + 2, text: text, item: it });
      }
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
      const k = PLOT_HEIGHT / cols.top, bytes = (PLOT_HEIGHT - y) / k;
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
        const box = (this.labelBoxes || []).find(b => x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1);
        const item = y >= PLOT_HEIGHT + AXIS_HEIGHT ? null : box ? box.item : (this.axisItems || []).find(a => Math.abs(a.x - x) <= 5);
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

  // Every timeline drawn again; timelines that share a scale (a device's runs on a compare page)
  // are laid out first, so that each one's top covers the highest of them.
  function drawAll() {
    for (const t of state.timelines) if (t.shared) t.shared.want = 0;
    const shared = state.timelines.filter(t => t.shared);
    for (const t of shared) { t.resize(); t.layout(); }
    for (const t of shared) t.shared.want = Math.max(t.shared.want, t.columns.want);
    for (const t of state.timelines) t.draw();
  }

  // Ticks for a byte axis up to at least `max`: steps of 1, 2 or 5 times a power of ten in one
  // binary unit (B, KiB, MiB, ...), at most 5 intervals, the top a whole number of steps.
  function byteTicks(max) {
    max = Math.max(max, 1);
    for (let u = 0; u < UNITS.length; u++) {
      for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500]) {
        const step = m * Math.pow(1024, u), n = Math.ceil(max / step);
        if (n > 5) continue;
        const ticks = [];
        for (let i = 0; i <= n; i++) ticks.push({ bytes: i * step, label: i === 0 ? '0' : (i * m) + ' ' + UNITS[u] });
        return { step: step, multiple: m, unit: UNITS[u], top: n * step, ticks: ticks };
      }
    }
    return { step: max, multiple: 1, unit: 'B', top: max, ticks: [{ bytes: 0, label: '0' }, { bytes: max, label: fmtBytes(max) }] };
  }

  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

