// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: tooltip, zoom, the composition at a moment, pools and segments.

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
    drawAll();
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
    const siteColour = new Map();
    for (const [stack, w] of weights) {
      const key = run.stackSite[stack] + (run.stackVia[stack] ? ' via ' + run.stackVia[stack] : '');
      add(sites, key, w.bytes, w.count);
      if (!siteColour.has(key)) siteColour.set(key, run.stackColour[stack]);
    }
    const rows = Array.from(sites.entries()).sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1));
    const tbody = box.sites;
    tbody.textContent = '';
    for (const [site, w] of rows.slice(0, 25)) {
      const tr = el('tr');
      if (state.search && !site.toLowerCase().includes(state.search)) tr.className = 'dim';
      figureCells(tr, w, total);
      const td = el('td', 'site');
      const sw = el('span', 'vt-swatch');
      sw.style.background = siteColour.get(site);
      td.appendChild(sw);
      td.appendChild(document.createTextNode(shown(site)));
      tr.appendChild(td);
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
        figureCells(tr, w, total);
        tr.appendChild(el('td', 'site', shown(run.rangeLabel[r])));
        box.ranges.appendChild(tr);
      }
    }
  }

  // The bytes, allocations and share of the live total of one row of a sitesTable.
  function figureCells(tr, w, total) {
    tr.appendChild(el('td', 'n', fmtBytesExact(w.bytes)));
    tr.appendChild(el('td', 'n', String(w.count)));
    tr.appendChild(el('td', 'n', (total ? (100 * w.bytes / total).toFixed(1) : '0.0') + '%'));
  }

  // A table of bytes, allocations and share by what the last column names, appended to parent;
  // returns its body, whose id is bodyId.
  function sitesTable(parent, bodyId, lastColumn) {
    const table = el('table', 'vt-sites');
    const head = el('tr');
    for (const h of ['bytes', 'allocations', 'share', lastColumn]) head.appendChild(el('th', '', h));
    table.appendChild(head);
    const body = el('tbody');
    body.id = bodyId;
    table.appendChild(body);
    parent.appendChild(table);
    return body;
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
    const controlsAt = el('div');
    sec.appendChild(controlsAt);
    sec.appendChild(flame);
    sec.appendChild(el('h3', '', 'Top call sites of what was live then'));
    const tbody = sitesTable(sec, 'vt-sites', 'call site');
    const more = el('p');
    sec.appendChild(more);
    const rangeSec = el('div', 'vt-by-range');
    rangeSec.appendChild(el('h3', '', 'By NVTX range'));
    const rbody = sitesTable(rangeSec, 'vt-ranges', 'NVTX range');
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
    flameControls(controlsAt, box);
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

