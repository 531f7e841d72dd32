// First render and interaction times of HTML reports in chromium (docs/performance.md, "The HTML
// report"): node viewer_render.cjs NODE_MODULES PAGE.html... prints per page the milliseconds from
// the navigation's start to the data parsed, decoded and the first view drawn, then a redraw (what
// a zoom costs), a zoom by drag and a hover. CHROMIUM names the browser (default chromium).
'use strict';
const path = require('path');
const [NODE_MODULES, ...PAGES] = process.argv.slice(2);
const { chromium } = require(path.resolve(NODE_MODULES, 'playwright-core'));

(async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || 'chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  for (const file of PAGES) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    const start = Date.now();
    await page.goto('file://' + path.resolve(file), { timeout: 120000 });
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
    const loaded = Date.now() - start;
    const t = await page.evaluate(() => window.vramtraceViewer.timing());
    const redraw = await page.evaluate(() => window.vramtraceViewer.redraw());
    // A drag over the middle fifth of the first timeline, then a hover in it.
    const full = await page.evaluate(() => window.vramtraceViewer.full());
    const a = await page.evaluate(t => window.vramtraceViewer.point(0, t, 0), full.t0 + 0.4 * (full.t1 - full.t0));
    const b = await page.evaluate(t => window.vramtraceViewer.point(0, t, 0), full.t0 + 0.6 * (full.t1 - full.t0));
    let t0 = Date.now();
    await page.mouse.move(a.x, a.y - 50); await page.mouse.down(); await page.mouse.move(b.x, b.y - 50); await page.mouse.up();
    await page.evaluate(() => new Promise(r => requestAnimationFrame(() => r())));
    const zoom = Date.now() - t0;
    t0 = Date.now();
    await page.mouse.move((a.x + b.x) / 2, a.y - 60);
    await page.waitForSelector('#vt-tip', { state: 'visible', timeout: 10000 }).catch(() => {});
    const hover = Date.now() - t0;
    console.log(path.basename(file) + ': parsed ' + t.parsed.toFixed(0) + ' ms, decoded ' + t.decoded.toFixed(0) +
      ' ms, first view ' + t.drawn.toFixed(0) + ' ms (page load to ready ' + loaded + ' ms); redraw ' + redraw.toFixed(0) +
      ' ms, drag zoom ' + zoom + ' ms, hover ' + hover + ' ms' + (errors.length ? '; ERRORS ' + errors.join(' | ') : ''));
    await page.close();
  }
  await browser.close();
})();
