// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the headline cards and the table of what was live at exit.

  // ---- Headline cards and what was live at exit ----
  // The device whose peak a card shows: the GPU with the highest peak, else any device.
  function peakDevice(run) {
    const devs = run.devices.filter(d => d.peak);
    const gpus = devs.filter(d => d.device >= 0);
    const pool = gpus.length ? gpus : devs;
    return pool.reduce((best, d) => (!best || d.peak > best.peak ? d : best), null);
  }
  function card(parent, id, title, value, detail, warn) {
    const c = el('div', 'vt-card' + (warn ? ' warn' : ''));
    c.id = id;
    c.appendChild(el('div', 'vt-card-title', title));
    c.appendChild(el('div', 'vt-card-value', value));
    c.appendChild(el('div', 'vt-card-detail', detail));
    parent.appendChild(c);
  }
  const CLASS_NAMES = ['held since start', 'grew', 'the rest'];
  // The answer first: the peak and when, what was live at the dump and how the summary classes it
  // (lib/report/live_classes.h: held since start, grew), the OOMs and the top holder at the peak.
  function makeCards(parent, run, name) {
    const box = el('section', 'vt-cards');
    if (name) box.appendChild(el('h2', '', name));
    const row = el('div', 'vt-card-row');
    const pd = peakDevice(run);
    card(row, 'vt-card-peak', 'peak', pd ? fmtBytes(pd.peak) : '-',
      pd ? 'on ' + pd.label + ' at ' + fmtTime(pd.peak_time === undefined ? run.end : pd.peak_time) : 'nothing tracked');
    const ex = run.exit, atExit = run.reason === 'exit';
    const liveBytes = ex ? ex.classes.reduce((a, c) => a + c[0], 0) : 0, liveCount = ex ? ex.classes.reduce((a, c) => a + c[1], 0) : 0;
    card(row, 'vt-card-live', atExit ? 'live at exit' : 'live at the dump (' + run.reason + ')', fmtBytes(liveBytes),
      liveCount + ' allocation' + (liveCount === 1 ? '' : 's'), atExit && liveBytes > 0);
    const known = ex && ex.basis !== 'none';
    card(row, 'vt-card-held', 'held since start', known ? fmtBytes(ex.classes[0][0]) : '-',
      known ? ex.classes[0][1] + ' allocation' + (ex.classes[0][1] === 1 ? '' : 's') + ' from ' +
        (ex.basis === 'marks' ? 'before the first mark' : 'the first tenth of the run') : 'the run\u2019s span is not known');
    const grew = ex ? ex.sites.filter(s => s[0] === 1) : [];
    card(row, 'vt-card-grew', 'grew', known ? fmtBytes(ex.classes[1][0]) : '-',
      !known ? 'the run\u2019s span is not known' : grew.length ? grew.length + ' call site' + (grew.length === 1 ? '' : 's') + ', most: ' +
        shown(run.strings[grew[0][1]]) : 'no call site grew through the run', known && ex.classes[1][0] > 0);
    card(row, 'vt-card-ooms', 'out of memory', String(run.oomList.length),
      run.oomList.length ? 'first: ' + fmtBytes(run.oomList[0].bytes) + ' asked at ' + fmtTime(run.oomList[0].t) : 'no allocation failed',
      run.oomList.length > 0);
    let top = null;
    if (pd && pd.peak_sites) for (const [stack, w] of atPeak(pd)) if (!top || w.bytes > top[1].bytes) top = [stack, w];
    card(row, 'vt-card-top', 'top holder at the peak', top ? fmtBytes(top[1].bytes) : '-',
      top ? shown(run.stackSite[top[0]]) : 'no peak composition');
    box.appendChild(row);
    parent.appendChild(box);
  }

  // What was live at the dump by call site and class, with a device column where devices mix.
  function makeExitTable(parent, run, name) {
    const ex = run.exit;
    if (!ex || !ex.sites.length) return;
    const sec = el('section', 'vt-exit');
    sec.appendChild(el('h2', '', (run.reason === 'exit' ? 'Live at exit' : 'Live at the dump') + (name ? ' (' + name + ')' : '')));
    const basis = ex.basis === 'marks' ? 'the run cut at its marks' : ex.basis === 'run_tenths' ? 'the run cut into tenths' : 'no intervals (the run\u2019s span is not known)';
    sec.appendChild(el('p', '', 'Classes as the summary gives them: held since start (made in the first interval), grew (a call site whose allocations came in at least half of the later intervals), the rest; ' + basis + '.'));
    const mixed = new Set(ex.sites.flatMap(s => s[2])).size > 1;
    const table = el('table', 'vt-sites');
    const head = el('tr');
    for (const h of ['class', 'bytes', 'allocations'].concat(mixed ? ['device'] : [], ['call site'])) head.appendChild(el('th', '', h));
    table.appendChild(head);
    const tbody = el('tbody'); tbody.id = 'vt-exit-sites';
    for (const s of ex.sites.slice(0, 50)) {
      const tr = el('tr', s[0] === 1 ? 'grown' : '');
      tr.appendChild(el('td', '', CLASS_NAMES[s[0]] + (s[0] === 1 ? ' (' + s[5] + ' intervals)' : '')));
      tr.appendChild(el('td', 'n', fmtBytesExact(s[3])));
      tr.appendChild(el('td', 'n', String(s[4])));
      if (mixed) tr.appendChild(el('td', '', s[2].map(d => d === -1 ? 'host' : d < -1 ? 'unknown' : 'cuda:' + d).join(', ')));
      const td = el('td', 'site'), sw = el('span', 'vt-swatch'), site = run.strings[s[1]];
      sw.style.background = hashColour(run.strings[s.length > 6 ? s[6] : s[1]]);
      td.appendChild(sw);
      td.appendChild(document.createTextNode(shown(site)));
      tr.appendChild(td);
      tbody.appendChild(tr);
    }
    table.appendChild(tbody);
    sec.appendChild(table);
    if (ex.sites.length > 50) sec.appendChild(el('p', '', '... and ' + (ex.sites.length - 50) + ' more call sites.'));
    parent.appendChild(sec);
  }

