// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the controls, legend, keys, the compare page, the page itself and its test API.

  // ---- Page ----
  function controls(parent) {
    const bar = el('div', 'vt-controls');
    const search = el('input');
    search.type = 'search'; search.id = 'vt-search'; search.placeholder = 'search function or file  ( / )';
    search.addEventListener('input', () => {
      state.search = search.value.trim().toLowerCase();
      drawAll();
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
    colour.addEventListener('change', () => { state.colourBy = colour.value; drawLegend(); drawAll(); });
    bar.appendChild(colour);
    const live = el('label', '', ' highlight live at the dump (l)');
    const box = el('input'); box.type = 'checkbox'; box.id = 'vt-live';
    box.addEventListener('change', () => { state.highlightLive = box.checked; drawAll(); });
    live.prepend(box);
    bar.appendChild(live);
    for (const [text, fn, id] of [['peak (p)', () => selectDefault('peak'), 'vt-peak'], ['dump (d)', () => selectDefault('dump'), 'vt-dump'], ['reset zoom (r)', resetView, 'vt-reset']]) {
      const b = el('button', '', text); b.id = id; b.addEventListener('click', fn); bar.appendChild(b);
    }
    bar.appendChild(el('span', 'vt-range', '')).id = 'vt-range';
    bar.appendChild(el('div', 'vt-keys', 'keys: drag zoom · double-click reset · ← → pan · + − zoom · / search · p peak · d dump · l live · Esc unpin'));
    parent.appendChild(bar);
  }

  // What the colours mean: the heaviest call sites (LEGEND_SITES of them), the categories, or the
  // NVTX range stacks (those of the drawn bands, in first-seen order; "(no range)" last).
  const LEGEND_SITES = 12;
  function drawLegend() {
    const box = document.getElementById('vt-legend');
    if (!box) return;
    box.textContent = '';
    const entries = [];
    if (state.colourBy === 'site') {
      // The heaviest call sites at the devices' peaks (at the dump for a device without peak
      // composition), each in the colour its bands, flame graph node and table swatch have.
      const bytes = new Map();
      for (const run of runs)
        for (const d of run.devices) {
          const w = d.peak_sites ? atPeak(d) : liveAtDump(d);
          for (const [stack, v] of w) add(bytes, run.stackSite[stack], v.bytes, v.count);
        }
      const sites = Array.from(bytes.entries()).sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1));
      for (const [site] of sites.slice(0, LEGEND_SITES)) entries.push([site, hashColour(site)]);
      if (sites.length > LEGEND_SITES) box.dataset.more = String(sites.length - LEGEND_SITES);
      else delete box.dataset.more;
    } else if (state.colourBy === 'category') {
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
    if (box.dataset.more && state.colourBy === 'site')
      box.appendChild(el('span', 'vt-key-more', '… and ' + box.dataset.more + ' more call sites, each in a colour of its own (hover a band)'));
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
      // Text fields and menus keep their keys; a checkbox just clicked does not take the page's.
      if (e.target && ((e.target.tagName === 'INPUT' && e.target.type !== 'checkbox') || e.target.tagName === 'SELECT')) {
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
      for (const [stack, v] of w) {
        add(out, run.stackKey[stack], v.bytes, v.count);
        const e = out.get(run.stackKey[stack]);
        (e.devices || (e.devices = new Set())).add(d.label);
      }
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
    const unchanged = el('label', '', ' show unchanged call sites');
    const showAll = el('input'); showAll.type = 'checkbox'; showAll.id = 'vt-diff-unchanged';
    unchanged.prepend(showAll);
    sec.appendChild(unchanged);
    const hidden = el('p', 'vt-diff-hidden', '');
    const table = el('table');
    const head = el('tr');
    for (const h of ['change', 'base', 'new', 'allocations (base → new)', 'call site']) head.appendChild(el('th', '', h));
    // Where the sites are on more than one device, a column says which.
    const deviceHead = el('th', '', 'devices');
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
      const devicesOf = r => Array.from(new Set([...(r.base.devices || []), ...(r.cur.devices || [])])).sort();
      const mixed = new Set(rows.flatMap(devicesOf)).size > 1;
      if (mixed && !deviceHead.parentNode) head.insertBefore(deviceHead, head.lastChild);
      // A site with the same bytes and allocations in both runs tells nothing about the change.
      const same = r => r.delta === 0 && r.base.count === r.cur.count;
      const n = rows.filter(same).length;
      hidden.textContent = n && !showAll.checked ? n + ' unchanged call site' + (n === 1 ? '' : 's') + ' hidden.' : '';
      for (const r of rows) {
        if (!showAll.checked && same(r)) continue;
        const tr = el('tr', r.delta > 0 ? 'grown' : r.delta < 0 ? 'shrunk' : '');
        tr.appendChild(el('td', 'n', (r.delta > 0 ? '+' : r.delta < 0 ? '-' : '') + fmtBytesExact(Math.abs(r.delta))));
        tr.appendChild(el('td', 'n', fmtBytesExact(r.base.bytes)));
        tr.appendChild(el('td', 'n', fmtBytesExact(r.cur.bytes)));
        tr.appendChild(el('td', 'n', r.base.count + ' → ' + r.cur.count));
        if (mixed) tr.appendChild(el('td', '', devicesOf(r).join(', ')));
        tr.appendChild(el('td', 'site', shown(r.site)));
        tbody.appendChild(tr);
      }
    }
    pick.addEventListener('change', fill);
    showAll.addEventListener('change', fill);
    sec.appendChild(hidden);
    fill();
    parent.appendChild(sec);
  }

  // The time of a run's first allocation (ns from its start), from the bands; the dump when it has
  // none. The time axis starts there by default: what comes before (CUDA's start-up, imports) has
  // no memory to show.
  function firstAllocation(run) {
    let t = Infinity;
    for (const d of run.devices) if (d.n) t = Math.min(t, d.start[0]);
    return t === Infinity ? run.end : t;
  }
  // The marks of the base whose label the new run has too (the first of each label).
  function sharedMarks(base, cur) {
    const out = [];
    for (const m of base.markList) {
      const other = cur.markList.find(n => n.label === m.label);
      if (other && !out.some(o => o.label === m.label)) out.push({ base: m.t, cur: other.t, label: m.label });
    }
    return out;
  }
  // Where the runs' times line up (time 0 of the axis): each run's first allocation, a shared mark
  // (`how` is "mark:N", N its index in sharedMarks), or the process starts.
  function alignment(how) {
    if (runs.length < 2) return { offsets: [0], text: '' };
    const marks = sharedMarks(runs[0], runs[1]);
    if (how.startsWith('mark:') && marks[+how.slice(5)]) {
      const m = marks[+how.slice(5)];
      return { offsets: [m.base, m.cur], text: 'The two runs are aligned at their shared mark "' + m.label + '" (time 0).' };
    }
    if (how === 'start') return { offsets: [0, 0], text: 'The two runs are aligned at their process starts.' };
    return { offsets: runs.map(firstAllocation), text: 'The two runs are aligned at their first allocations (time 0).' };
  }
  // Aligns the timelines as `how` says and sets the full range: from the first allocation (the
  // earliest of the runs, aligned), or from the process start with the toggle on.
  function applyTime() {
    const a = alignment(state.align);
    let t0 = Infinity, t1 = -Infinity;
    runs.forEach((run, r) => {
      t0 = Math.min(t0, (state.fromStart ? 0 : firstAllocation(run)) - a.offsets[r]);
      t1 = Math.max(t1, run.end - a.offsets[r]);
    });
    for (const t of state.timelines) t.offset = a.offsets[runs.indexOf(t.run)];
    state.full = { t0: t0, t1: t1 > t0 ? t1 : t0 + 1 };
    const note = document.querySelector('.vt-align');
    if (note) note.textContent = a.text;
    resetView();
  }
  function timeControls(parent) {
    const bar = el('div', 'vt-time');
    const label = el('label', '', ' time axis from the process start');
    const box = el('input'); box.type = 'checkbox'; box.id = 'vt-from-start';
    box.addEventListener('change', () => { state.fromStart = box.checked; applyTime(); });
    label.prepend(box);
    bar.appendChild(label);
    if (runs.length > 1) {
      const pick = el('select'); pick.id = 'vt-align';
      const options = [['first', 'align at the first allocations'], ['start', 'align at the process starts']];
      sharedMarks(runs[0], runs[1]).forEach((m, i) => options.push(['mark:' + i, 'align at mark "' + m.label + '"']));
      for (const [v, t] of options) { const o = el('option', '', t); o.value = v; pick.appendChild(o); }
      pick.addEventListener('change', () => { state.align = pick.value; applyTime(); });
      bar.appendChild(pick);
      bar.appendChild(el('p', 'vt-align', ''));
    }
    parent.appendChild(bar);
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
    runs.forEach((run, r) => makeCards(app, run, runs.length > 1 ? data.names[r] : ''));
    controls(app);
    const tlSection = el('section', 'vt-timelines');
    tlSection.appendChild(el('h2', '', 'Active memory timeline'));
    tlSection.appendChild(el('div', 'vt-legend')).id = 'vt-legend';
    app.appendChild(tlSection);
    const pinned = el('pre', 'vt-pinned');
    pinned.id = 'vt-pinned';
    timeControls(tlSection);
    const offsets = alignment(state.align).offsets;
    state.full = { t0: 0, t1: 1 };
    state.view = state.full;
    const ordinals = Array.from(new Set(runs.flatMap(r => r.devices.map(d => d.device)))).sort((a, b) => (a >= 0 ? a : 1e6 - a) - (b >= 0 ? b : 1e6 - b));
    if (!ordinals.length) tlSection.appendChild(el('p', '', 'No tracked memory.'));
    const shared = new Map();
    for (const o of ordinals) {
      runs.forEach((run, r) => {
        const dev = run.devices.find(d => d.device === o);
        if (!dev) return;
        const caption = (runs.length > 1 ? data.names[r] + ': ' : '') + dev.label + (dev.peak ? ', peak ' + fmtBytesExact(dev.peak) : '') +
          ', ' + dev.n + ' allocation' + (dev.n === 1 ? '' : 's') + ' drawn';
        const tl = new Timeline(tlSection, run, dev, offsets[r], caption);
        // A device's runs on a compare page share one vertical scale.
        if (runs.length > 1) tl.shared = shared.get(o) || shared.set(o, { want: 0 }).get(o);
        state.timelines.push(tl);
      });
    }
    tlSection.appendChild(pinned);
    makeComposition(app);
    runs.forEach((run, r) => makeExitTable(app, run, runs.length > 1 ? data.names[r] : ''));
    runs.forEach((run, r) => makePools(app, run, runs.length > 1 ? data.names[r] : ''));
    keyboard();
    drawLegend();
    showPinned();
    applyTime();
    selectDefault('peak');
    let pending = 0;
    window.addEventListener('resize', () => { clearTimeout(pending); pending = setTimeout(() => { drawAll(); }, 100); });
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
      const k = PLOT_HEIGHT / tl.columns.top;
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
    // The flame graph as drawn: one entry per node (depth 0 is the root), its name, the call site
    // it is the frame of (null: not a call-site frame), its colour and bytes.
    flame: () => composition.rows.map(r => Object.assign({}, r)),
    // The colour a band of stack `stack` of timeline i is drawn in (what its pixels hold).
    bandColour: (i, b) => state.timelines[i].bandColour(b),
    peakTime: i => state.timelines[i].dev.peak_time,
    // The axis labels drawn on timeline i: their boxes (canvas px) and texts, and the canvas width.
    labels: i => ({ width: state.timelines[i].width, boxes: state.timelines[i].labelBoxes.map(b => [b.x0, b.y0, b.x1, b.y1, b.text, b.item.label]),
      items: state.timelines[i].axisItems.length, labels: state.timelines[i].axisItems.map(a => a.label) }),
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
    redraw: () => { const t = performance.now(); drawAll(); return performance.now() - t; },
    timelines: () => state.timelines.map(t => ({ device: t.dev.label, bands: t.dev.n, max: t.columns ? t.columns.max : 0 })),
    // The vertical axis of timeline i: its ticks (bytes, label), the step and its top (bytes).
    axis: i => { const c = state.timelines[i].columns; return { ticks: c.scale.ticks, step: c.scale.step, multiple: c.scale.multiple, unit: c.scale.unit, top: c.top, peak: state.timelines[i].dev.peak || 0 }; }
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main); else main();
})();
