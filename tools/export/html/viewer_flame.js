// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the icicle graph of a composition (root first or call sites first) and which frames
// it hides.

  // ---- Flame graph ----
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

