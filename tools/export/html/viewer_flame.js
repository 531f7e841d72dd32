// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the icicle graph of a composition (root first or call sites first) and which frames
// it hides.

  // ---- Flame graph ----
  // The frames of a stack as the flame graph shows them, leaf first, with where its call site is:
  // without runtime frames (vramtrace, the CUDA runtime and driver, libc's start-up; the
  // interpreter's C frames where the stack has Python frames), or only its Python frames.
  function flameFrames(run, stack) {
    const frames = run.stacks[stack][3], siteAt = run.stackSiteAt[stack], py = run.stackPython[stack];
    const out = [];
    let site = -1;
    for (let i = 0; i < frames.length; i++) {
      const flags = run.frames[frames[i]][3];
      if (state.pythonOnly && py && !(flags & FRAME_PYTHON) && i !== siteAt) continue;
      if (state.hideRuntime && i !== siteAt && ((flags & FRAME_RUNTIME) || (py && (flags & FRAME_CPYTHON)))) continue;
      if (i === siteAt) site = out.length;
      out.push(frames[i]);
    }
    return { frames: out, site: site };
  }

  // The icicle tree of `weights` (stack -> bytes, count): root first, or call sites first (each
  // path starts at its call-site frame and goes outwards; what is inside the call site, the
  // allocators' frames, is left out).
  function buildTree(run, weights) {
    const root = { name: 'all', where: '', bytes: 0, count: 0, kids: new Map(), site: null };
    for (const [stack, w] of weights) {
      root.bytes += w.bytes; root.count += w.count;
      let node = root;
      const f = flameFrames(run, stack);
      let path = f.frames.map((fr, i) => ({ name: run.frameText[fr], site: i === f.site ? run.stackSite[stack] : null }));
      if (state.flameOrder === 'leaf') path = f.site >= 0 ? path.slice(f.site) : path;
      else path.reverse();
      if (!path.length) path = [{ name: '(no stack captured)', site: run.stackSite[stack] }];
      for (const step of path) {
        const key = step.name + (step.site === null ? '' : '\u0000' + step.site);
        let k = node.kids.get(key);
        if (!k) { k = { name: step.name, site: step.site, bytes: 0, count: 0, kids: new Map() }; node.kids.set(key, k); }
        k.bytes += w.bytes; k.count += w.count;
        node = k;
      }
    }
    return root;
  }

  // A call-site node has its site's colour (the timeline's, the legend's); other frames are pale.
  function nodeColour(box, n) {
    if (n === box.tree) return '#e0e0e0';
    return n.site !== null ? hashColour(n.site) : flameColour(n.name);
  }

  function drawFlame(box) {
    const flame = box.flame, root = box.focus;
    flame.textContent = '';
    let depthMax = 0;
    const todo = [{ node: root, x: 0, w: 1, depth: 0 }];
    box.rows = [];
    while (todo.length) {
      const it = todo.pop();
      const n = it.node;
      depthMax = Math.max(depthMax, it.depth);
      const div = el('div', 'fn', it.w * 1000 > 28 ? n.name : '');
      div.style.left = (100 * it.x) + '%';
      div.style.width = (100 * it.w) + '%';
      div.style.top = (it.depth * FLAME_ROW) + 'px';
      div.style.background = nodeColour(box, n);
      if (state.search && n.name.toLowerCase().includes(state.search)) div.classList.add('hit');
      div.vtNode = n;
      flame.appendChild(div);
      box.rows.push({ depth: it.depth, name: n.name, site: n.site, colour: nodeColour(box, n), bytes: n.bytes });
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

  // The flame graph's own controls: order, runtime frames, Python frames only.
  function flameControls(parent, box) {
    const bar = el('div', 'vt-flame-controls');
    const order = el('select'); order.id = 'vt-flame-order';
    for (const [v, t] of [['root', 'root first'], ['leaf', 'call sites first (leaf first)']]) { const o = el('option', '', t); o.value = v; order.appendChild(o); }
    order.addEventListener('change', () => { state.flameOrder = order.value; redrawComposition(box); });
    bar.appendChild(order);
    for (const [id, text, key] of [['vt-hide-runtime', ' hide runtime frames', 'hideRuntime'], ['vt-python-only', ' Python frames only', 'pythonOnly']]) {
      const label = el('label', '', text), cb = el('input');
      cb.type = 'checkbox'; cb.id = id; cb.checked = state[key];
      cb.addEventListener('change', () => { state[key] = cb.checked; redrawComposition(box); });
      label.prepend(cb);
      bar.appendChild(label);
    }
    parent.appendChild(bar);
  }
  function redrawComposition(box) {
    if (box.last) renderComposition(...box.last);
  }
