// The HTML report in a real browser: Debian's chromium driven by playwright-core (no browser
// download). One browser for every case of this file:
//
//   node viewer_test.cjs VT WORK NODE_MODULES DATA CASE...
//
// VT the built vramtrace, WORK a scratch directory (pages and screenshots, kept as artifacts),
// NODE_MODULES where `npm install playwright-core` put it, DATA tests/cli/data. CHROMIUM (the
// environment) names the browser, default "chromium". Cases: report, compare, marks, serve,
// hostile, history, nvtx, intervals, python, picture. Prints "PASS name" / "FAIL name: why" per check and "N passed, M failed"; exits 1 when a
// check failed or when playwright-core or chromium is missing (a missing tool fails, never skips).
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const [VT, WORK, NODE_MODULES, DATA, ...CASES] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log('PASS ' + name); }
  else { failed++; console.log('FAIL ' + name + (detail !== undefined ? ': ' + detail : '')); }
}
function same(name, got, want) {
  const a = JSON.stringify(got), b = JSON.stringify(want);
  check(name, a === b, 'got ' + a + ', want ' + b);
}

let chromium;
try {
  ({ chromium } = require(path.resolve(NODE_MODULES, 'playwright-core')));
} catch (e) {
  console.log('FAIL playwright-core is not installed in ' + NODE_MODULES + ' (npm install --prefix ' +
    path.dirname(NODE_MODULES) + ' playwright-core): ' + e.message);
  process.exit(1);
}

// The version the build pins (tests/browser/CMakeLists.txt), so that CI tests what the README installs.
const installed = require(path.resolve(NODE_MODULES, 'playwright-core', 'package.json')).version;
if (process.env.VT_PLAYWRIGHT_VERSION && installed !== process.env.VT_PLAYWRIGHT_VERSION) {
  console.log('FAIL playwright-core ' + installed + ' is installed, the build pins ' + process.env.VT_PLAYWRIGHT_VERSION);
  process.exit(1);
}
fs.mkdirSync(WORK, { recursive: true });
function exportPage(name, args) {
  const out = path.join(WORK, name + '.html');
  execFileSync(VT, ['export', '-f', 'html', '-o', out, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return out;
}
// "U64MAX" anywhere in a value is written as the number 2^64 - 1 (a double cannot hold it).
function writeJson(name, value) {
  const p = path.join(WORK, name + '.json');
  fs.writeFileSync(p, JSON.stringify(value, null, 1).replace(/"U64MAX"/g, '18446744073709551615'));
  return p;
}
const MiB = 1048576;

async function open(browser, file, isUrl) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', e => errors.push('pageerror: ' + e.message));
  page.on('console', m => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  // Nothing may be fetched: the page is self-contained.
  const requests = [];
  page.on('request', r => { if (!r.url().startsWith(isUrl ? file : 'file:')) requests.push(r.url()); });
  await page.goto(isUrl ? file : 'file://' + file);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
  page.vtErrors = errors;
  page.vtRequests = requests;
  return page;
}
const text = (page, sel) => page.$eval(sel, e => e.textContent);
const texts = (page, sel) => page.$$eval(sel, es => es.map(e => e.textContent));
async function at(page, i, t, bytes) { return page.evaluate(([i, t, b]) => window.vramtraceViewer.point(i, t, b), [i, t, bytes]); }
// The vertical axis of timeline i: steps of 1, 2 or 5 times a power of ten in one binary unit,
// every tick a whole number of steps, the top tick at or above the device's peak.
async function checkAxis(name, page, i) {
  const a = await page.evaluate(i => window.vramtraceViewer.axis(i), i);
  const unit = Math.pow(1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'].indexOf(a.unit));
  const m = a.multiple, decade = Math.pow(10, Math.floor(Math.log10(m)));
  check(name + ': the step is 1, 2 or 5 x 10^k ' + a.unit, [1, 2, 5].includes(m / decade) && a.step === m * unit, JSON.stringify(a));
  check(name + ': ticks are whole steps from 0', a.ticks.every((t, k) => t.bytes === k * a.step), JSON.stringify(a.ticks));
  check(name + ': the labels say the steps', a.ticks.every((t, k) => t.label === (k ? (k * m) + ' ' + a.unit : '0')), JSON.stringify(a.ticks));
  check(name + ': the top tick is at or above the peak', a.top === a.ticks[a.ticks.length - 1].bytes && a.top >= a.peak, JSON.stringify(a));
  return a;
}
const rows = page => page.$$eval('#vt-sites tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent)));

// tests/cli/data/export_input.json: on cuda:0 1 MiB from 0.5 s (live at the dump, 5 s) and 3 MiB
// from 1.0 s to 2.0 s (times from the process start); the peak 4 MiB at 1.0 s; a mark at 1.5 s.
async function caseReport(browser) {
  const page = await open(browser, exportPage('report', [path.join(DATA, 'export_input.json')]));
  same('report: timelines per device', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => [t.device, t.bands])),
    [['cuda:0', 2], ['cuda:1', 1], ['host', 1]]);
  // Byte counts read as the CLI writes them: the cases the C++ format_bytes is held to.
  const cases = fs.readFileSync(path.resolve(__dirname, '../unit/report/data/format_bytes_cases.txt'), 'utf8')
    .split('\n').filter(l => l && !l.startsWith('#')).map(l => l.split('\t'));
  same('report: 21 byte-formatting cases', cases.length, 21);
  same('report: bytes formatted as the CLI formats them',
    await page.evaluate(cs => cs.map(([b]) => window.vramtraceViewer.formatBytes(Number(b))), cases), cases.map(c => c[1]));
  same('report: the peak is preselected', await text(page, '#vt-comp-title'),
    'Live at the peak of cuda:0 (1.000 s, exact, from the peak counters): 4.00 MiB (4194304 B) in 2 allocations');
  same('report: top sites at the peak', await rows(page), [
    ['3.00 MiB (3145728 B)', '1', '75.0%', '?? (train+0x2000)'],
    ['1.00 MiB (1048576 B)', '1', '25.0%', 'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined into make_buffer(unsigned long) at /src/train.cpp:42) (train)']]);

  // Hover the 3 MiB band at 1.5 s (it lies on top of the 1 MiB one: 1 to 4 MiB).
  let p = await at(page, 0, 1.5e9, 2.5 * MiB);
  await page.mouse.move(p.x, p.y);
  same('report: hover shows the allocation and its whole stack', await text(page, '#vt-tip'), [
    '3.00 MiB (3145728 B) on cuda:0 at 0x7f3a00200000',
    'api cudaMalloc, stream (not recorded), thread 4242',
    'allocated at 1.000 s, freed at 2.000 s, lived 1.000 s',
    'call site: ?? (train+0x2000)',
    'stack (leaf first):',
    '  cudaMalloc',
    '  train+0x2000',
    '  main at /src/train.cpp:97'].join('\n'));
  p = await at(page, 0, 3e9, 0.5 * MiB);
  await page.mouse.move(p.x, p.y);
  same('report: hover of the band live at the dump', (await text(page, '#vt-tip')).split('\n').slice(0, 3), [
    '1.00 MiB (1048576 B) on cuda:0 at 0x7f3a00000000',
    'api cudaMalloc, stream 0x0, thread 4242',
    'allocated at 0.500 s, still live at the dump (5.000 s)']);
  // The mark on the time axis.
  p = await at(page, 0, 1.5e9, 0);
  await page.mouse.move(p.x, p.y + 22);
  same('report: hover of the mark on the axis', await text(page, '#vt-tip'), 'mark "epoch "1" <a;b>" at 1.500 s');
  p = await at(page, 0, 3e9, 0);
  await page.mouse.move(p.x, p.y + 22);
  same('report: hover of the OOM on the axis', (await text(page, '#vt-tip')).split('\n')[0],
    'out of memory: cudaMalloc asked for 8.00 GiB (8589934592 B) at 3.000 s, 1.00 MiB (1048576 B) tracked then, thread 4242');
  p = await at(page, 0, 5e9, 0);
  await page.mouse.move(p.x, p.y + 22);
  same('report: hover of the dump on the axis', await text(page, '#vt-tip'), 'snapshot (reason exit) at 5.000 s');
  await page.screenshot({ path: path.join(WORK, 'report.png'), fullPage: true });
  // The headline cards and the live-at-exit table (classes: lib/report/live_classes.h).
  const cards = await page.$$eval('.vt-card', cs => cs.map(c => [c.id, c.querySelector('.vt-card-value').textContent, c.querySelector('.vt-card-detail').textContent]));
  same('report: the headline cards', cards, [['vt-card-peak', '4.00 MiB', 'on cuda:0 at 1.000 s'],
    ['vt-card-live', '3.00 MiB', '3 allocations'], ['vt-card-held', '1.00 MiB', '1 allocation from before the first mark'],
    ['vt-card-grew', '0 B', 'no call site grew through the run'], ['vt-card-ooms', '1', 'first: 8.00 GiB asked at 3.000 s'],
    ['vt-card-top', '3.00 MiB', '?? (train+0x2000)']]);
  const exitRows = await page.$$eval('#vt-exit-sites tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent)));
  same('report: the live-at-exit table, with a device column (devices mix)', exitRows, [
    ['held since start', '1.00 MiB (1048576 B)', '1', 'cuda:0', 'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined into make_buffer(unsigned long) at /src/train.cpp:42) (train)'],
    ['the rest', '2.00 MiB (2097152 B)', '1', 'cuda:1', 'worker(int) at /src/train.cpp:120 (train)'],
    ['the rest', '4.00 KiB (4096 B)', '1', 'host', '(no stack captured)']]);
  same('report: the static table of the peaks has a device column', await page.$$eval('.vt-static table:last-of-type tr', trs => trs.slice(0, 3).map(tr => Array.from(tr.children).map(td => td.textContent))), [
    ['bytes', 'allocations', 'device', 'call site'], ['3.00 MiB (3145728 B)', '1', 'cuda:0', '?? (train+0x2000)'],
    ['2.00 MiB (2097152 B)', '1', 'cuda:1', 'worker(int) at /src/train.cpp:120 (train)']]);
  const axis = await checkAxis('report: cuda:0 axis', page, 0);
  same('report: cuda:0 ticks for its 4 MiB peak', axis.ticks.map(t => t.label), ['0', '1 MiB', '2 MiB', '3 MiB', '4 MiB']);

  // Click at 3.0 s: only the 1 MiB allocation is live.
  p = await at(page, 0, 3e9, 0.5 * MiB);
  await page.mouse.click(p.x, p.y);
  const title = await text(page, '#vt-comp-title');
  check('report: a click at 3 s shows what was live then', /^Live on cuda:0 at (2\.99\d|3\.00\d) s: 1\.00 MiB \(1048576 B\) in 1 allocation$/.test(title), title);
  // Runtime frames (cudaMalloc: the frame rules' cuda_runtime group) are hidden by default.
  same('report: the flame graph at 3 s', await texts(page, '#vt-flame .fn'), ['all', 'main at /src/train.cpp:97',
    'make_buffer(unsigned long) at /src/train.cpp:42', 'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined)']);
  check('report: the click pins the band', (await text(page, '#vt-pinned')).startsWith('1.00 MiB (1048576 B) on cuda:0 at 0x7f3a00000000\n'),
    await text(page, '#vt-pinned'));
  await page.keyboard.press('Escape');
  same('report: Escape unpins', await text(page, '#vt-pinned'), 'Click a band to pin its details here (Escape unpins).');
  // Click at 1.5 s: both.
  p = await at(page, 0, 1.5e9, 0.5 * MiB);
  await page.mouse.click(p.x, p.y);
  same('report: the flame graph at 1.5 s', await texts(page, '#vt-flame .fn'), ['all', 'main at /src/train.cpp:97',
    'train+0x2000', 'make_buffer(unsigned long) at /src/train.cpp:42',
    'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined)']);
  same('report: the widths of the flame graph at 1.5 s', await page.$$eval('#vt-flame .fn', es => es.map(e => e.style.width)),
    ['100%', '100%', '75%', '25%', '25%']);
  await page.click('#vt-hide-runtime');
  same('report: with runtime frames, cudaMalloc under each site', await texts(page, '#vt-flame .fn'), ['all', 'main at /src/train.cpp:97',
    'train+0x2000', 'cudaMalloc', 'make_buffer(unsigned long) at /src/train.cpp:42',
    'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined)', 'cudaMalloc']);
  same('report: and their widths', await page.$$eval('#vt-flame .fn', es => es.map(e => e.style.width)),
    ['100%', '100%', '75%', '75%', '25%', '25%', '25%']);
  await page.click('#vt-hide-runtime');
  // Call sites first: the row under the root is the call sites, then outwards to main.
  await page.selectOption('#vt-flame-order', 'leaf');
  const leaf = await page.evaluate(() => window.vramtraceViewer.flame());
  same('report: leaf first puts the call sites first', leaf.filter(r => r.depth === 1).map(r => [r.name, r.site]), [
    ['train+0x2000', '?? (train+0x2000)'],
    ['alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined)',
      'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined into make_buffer(unsigned long) at /src/train.cpp:42) (train)']]);
  same('report: leaf first, then outwards', leaf.map(r => [r.depth, r.name]), [[0, 'all'], [1, 'train+0x2000'], [2, 'main at /src/train.cpp:97'],
    [1, 'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined)'], [2, 'make_buffer(unsigned long) at /src/train.cpp:42'],
    [3, 'main at /src/train.cpp:97']]);
  await page.screenshot({ path: path.join(WORK, 'report-leaf-first.png'), fullPage: true });
  await page.selectOption('#vt-flame-order', 'root');
  // One colour per call site: the legend's swatch, the band's pixels and the flame graph's node.
  const legend = await page.$$eval('#vt-legend .vt-key', ks => ks.map(k => [k.querySelector('.vt-key-text').textContent,
    getComputedStyle(k.querySelector('.vt-swatch')).backgroundColor]));
  const hex = rgb => '#' + rgb.match(/\d+/g).slice(0, 3).map(v => (+v).toString(16).padStart(2, '0')).join('');
  same('report: the legend lists the call sites by bytes at the peaks', legend.map(l => l[0]), ['?? (train+0x2000)',
    'worker(int) at /src/train.cpp:120 (train)',
    'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined into make_buffer(unsigned long) at /src/train.cpp:42) (train)',
    '(no stack captured)']);
  const flameNow = await page.evaluate(() => window.vramtraceViewer.flame());
  for (const [site, colour] of legend.slice(0, 3)) {
    const node = flameNow.find(r => r.site === site);
    if (site.startsWith('worker')) continue; // cuda:1's site: not in cuda:0's composition
    same('report: the flame graph node of ' + site.slice(0, 20) + ' has the legend\'s colour', node && node.colour, hex(colour));
  }
  // (Off the mark at 1.5 s and the OOM at 3 s, whose lines cross the bands.)
  p = await at(page, 0, 1.6e9, 2.5 * MiB);
  const pixel = await page.evaluate(([x, y]) => {
    const c = document.querySelector('.vt-tl canvas.vt-base'), r = c.getBoundingClientRect();
    return Array.from(c.getContext('2d').getImageData(Math.round(x - r.left), Math.round(y - r.top), 1, 1).data);
  }, [p.x, p.y]);
  same('report: the 3 MiB band\'s pixels have the legend\'s colour of its site', hex('rgb(' + pixel.join(',') + ')'), hex(legend[0][1]));
  p = await at(page, 0, 3.2e9, 0.5 * MiB);
  const pixel2 = await page.evaluate(([x, y]) => {
    const c = document.querySelector('.vt-tl canvas.vt-base'), r = c.getBoundingClientRect();
    return Array.from(c.getContext('2d').getImageData(Math.round(x - r.left), Math.round(y - r.top), 1, 1).data);
  }, [p.x, p.y]);
  same('report: the 1 MiB band\'s pixels have the legend\'s colour of its site', hex('rgb(' + pixel2.join(',') + ')'), hex(legend[2][1]));
  same('report: the table\'s swatches have the same colours', await page.$$eval('#vt-sites .vt-swatch', es => es.map(e => getComputedStyle(e).backgroundColor)),
    [legend[0][1], legend[2][1]]);
  await page.click('#vt-dump');
  same('report: the composition at the dump', await text(page, '#vt-comp-title'),
    'Live at the dump on cuda:0 (5.000 s): 1.00 MiB (1048576 B) in 1 allocation');

  // Drag from 1.0 s to 2.0 s: the view is that range (to a pixel, 4.4 ms here).
  const a = await at(page, 0, 1e9, MiB), b = await at(page, 0, 2e9, MiB);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  let v = await page.evaluate(() => window.vramtraceViewer.view());
  check('report: drag zooms to 1.0 .. 2.0 s', Math.abs(v.t0 - 1e9) < 5e6 && Math.abs(v.t1 - 2e9) < 5e6, JSON.stringify(v));
  // Zoomed in, the scale is that of the range: 4 MiB at its top.
  same('report: the scale follows the zoom', (await page.evaluate(() => window.vramtraceViewer.timelines()))[0].max, 4 * MiB);
  await page.screenshot({ path: path.join(WORK, 'report-zoomed.png') });
  p = await at(page, 0, 1.5e9, MiB);
  await page.mouse.dblclick(p.x, p.y);
  // The time axis starts at the first allocation (0.5 s), not at the process start.
  same('report: double-click resets the view', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 0.5e9, t1: 5e9 });
  await page.keyboard.press('+');
  same('report: + zooms in on the middle', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 1.625e9, t1: 3.875e9 });
  await page.keyboard.press('ArrowRight');
  same('report: the right arrow pans', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 2.1875e9, t1: 4.4375e9 });
  await page.keyboard.press('r');
  same('report: r resets the view', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 0.5e9, t1: 5e9 });
  await page.click('#vt-from-start');
  same('report: the toggle starts the axis at the process start', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 0, t1: 5e9 });
  await page.click('#vt-from-start');
  same('report: and back at the first allocation', await page.evaluate(() => window.vramtraceViewer.view()), { t0: 0.5e9, t1: 5e9 });
  await page.keyboard.press('p');
  same('report: p selects the peak', await text(page, '#vt-comp-title'),
    'Live at the peak of cuda:0 (1.000 s, exact, from the peak counters): 4.00 MiB (4194304 B) in 2 allocations');
  await page.keyboard.press('/');
  await page.keyboard.type('worker');
  same('report: search counts the matching stacks', await text(page, '#vt-search-count'), '1 stack matches');
  same('report: search dims the other sites', await page.$$eval('#vt-sites tr', trs => trs.map(t => t.className)), ['dim', 'dim']);
  same('report: no script error', page.vtErrors, []);
  same('report: nothing fetched', page.vtRequests, []);
  await page.close();
}

// 40 marks 1 ms apart just before the dump (monotonic 5.960 .. 5.999 s, 4.960 .. 4.999 s from the
// start), beside the peak, OOM and dump markers: no two label boxes intersect, none passes the
// canvas's edge, and a mark whose label was left out still has its whole text on hover.
async function caseMarks(browser) {
  const s = JSON.parse(fs.readFileSync(path.join(DATA, 'export_input.json')));
  for (let k = 0; k < 40; k++) s.events.push({ type: 'mark', time_ns: 5960000000 + k * 1e6, thread_id: 4242, label: 'step ' + k + (k === 0 ? 'params loaded' : '') });
  s.event_history.recorded += 40;
  const page = await open(browser, exportPage('marks', [writeJson('marks', s)]));
  await page.click('#vt-from-start');
  const boxOverlaps = l => {
    const out = [];
    for (let a = 0; a < l.boxes.length; a++)
      for (let b = a + 1; b < l.boxes.length; b++) {
        const p = l.boxes[a], q = l.boxes[b];
        if (p[0] < q[2] && q[0] < p[2] && p[1] < q[3] && q[1] < p[3]) out.push([p[4], q[4]]);
      }
    return out;
  };
  for (const [view, zoom] of [['the whole run', null], ['zoomed on the marks', [4.955e9, 5.001e9]]]) {
    if (zoom) {
      const a = await at(page, 0, zoom[0], MiB), b = await at(page, 0, zoom[1], MiB);
      await page.mouse.move(a.x, a.y); await page.mouse.down(); await page.mouse.move(b.x, b.y, { steps: 4 }); await page.mouse.up();
    }
    for (let i = 0; i < 3; i++) {
      const l = await page.evaluate(i => window.vramtraceViewer.labels(i), i);
      same('marks: ' + view + ', timeline ' + i + ': no two label boxes intersect', boxOverlaps(l), []);
      same('marks: ' + view + ', timeline ' + i + ': no label passes the canvas edge', l.boxes.filter(b => b[0] < 0 || b[2] > l.width).map(b => b[4]), []);
      if (zoom) {
        // All but the dump's, 1 ms right of "step 39" at the canvas's edge: no lane has room left.
        same('marks: ' + view + ', timeline ' + i + ': every label drawn but the dump\'s', l.labels.filter(t => !l.boxes.some(b => b[5] === t)), ['dump']);
        check('marks: ' + view + ', timeline ' + i + ': some elided', l.boxes.some(b => b[4].endsWith('…')), JSON.stringify(l.boxes.map(b => b[4])));
      } else check('marks: ' + view + ', timeline ' + i + ': labels drawn, some left out', l.boxes.length >= 3 && l.boxes.length < l.items, l.boxes.length + ' of ' + l.items);
    }
  }
  const l = await page.evaluate(() => window.vramtraceViewer.labels(0));
  same('marks: zoomed in, all 40 marks are labelled', l.boxes.filter(b => b[4].startsWith('st')).length, 40);
  // An elided label's box hovers the whole text.
  const el0 = l.boxes.find(b => b[4].endsWith('…'));
  if (el0) {
    const r = await page.evaluate(() => { const c = document.querySelector('.vt-tl canvas.vt-over'); const b = c.getBoundingClientRect(); return [b.left, b.top]; });
    await page.mouse.move(r[0] + (el0[0] + el0[2]) / 2, r[1] + (el0[1] + el0[3]) / 2);
    check('marks: an elided label hovers its whole text', /^mark "step \d+(params loaded)?" at 4\.9\d\d s$/.test(await text(page, '#vt-tip')), await text(page, '#vt-tip'));
  }
  // The last mark's marker: its hover says the whole label.
  const p = await at(page, 0, 4.999e9, 0);
  await page.mouse.move(p.x, p.y + 22);
  same('marks: the marker of "step 39" hovers its text', await text(page, '#vt-tip'), 'mark "step 39" at 4.999 s');
  await page.screenshot({ path: path.join(WORK, 'marks.png'), fullPage: true });
  same('marks: no script error', page.vtErrors, []);
  await page.close();
}

// `vramtrace view --serve`: the URL it prints opens the page; a request without the token, with a
// wrong one or with a foreign Host is refused; it listens on 127.0.0.1 only; Ctrl-C ends it.
async function caseServe(browser) {
  const { spawn } = require('child_process');
  const http = require('http'), net = require('net'), os = require('os');
  const proc = spawn(VT, ['view', '--serve', path.join(DATA, 'export_input.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  proc.stdout.on('data', d => { out += d; });
  proc.stderr.on('data', d => { err += d; });
  const exited = new Promise(resolve => proc.on('exit', (code, signal) => resolve([code, signal])));
  for (let i = 0; i < 100 && !out.includes('\n'); i++) await new Promise(r => setTimeout(r, 50));
  const url = out.split('\n')[0];
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\/([0-9a-f]{32})\/$/.exec(url);
  check('serve: prints a loopback URL with a 128-bit token', m !== null, JSON.stringify(out));
  if (!m) { proc.kill('SIGKILL'); return; }
  const port = +m[1], token = m[2];
  const get = (p, host) => new Promise(resolve => {
    const req = http.get({ host: '127.0.0.1', port: port, path: p, headers: { Host: host || '127.0.0.1:' + port } }, res => {
      let body = '';
      res.on('data', d => { body += d; });
      res.on('end', () => resolve([res.statusCode, body]));
    });
    req.on('error', e => resolve([0, e.code]));
  });
  same('serve: no token is refused', await get('/'), [403, 'forbidden: the URL\'s token is missing or wrong\n']);
  same('serve: a wrong token is refused', await get('/' + '0'.repeat(32) + '/'), [403, 'forbidden: the URL\'s token is missing or wrong\n']);
  same('serve: the token without its slash is refused past it', (await get('/' + token + 'x/'))[0], 403);
  same('serve: a foreign Host is refused', await get('/' + token + '/', 'attacker.example:' + port), [403, 'forbidden: the Host is not this machine\'s loopback\n']);
  const [status, body] = await get('/' + token + '/');
  same('serve: the token gets the page', [status, body.startsWith('<!DOCTYPE html>'), body.includes('id="vt-data"')], [200, true, true]);
  // Listening on 127.0.0.1 only: the kernel's table of listening sockets, and a connection to every
  // other address of this machine refused.
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const listeners = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map(l => l.trim().split(/\s+/))
    .filter(f => f.length > 3 && f[1].endsWith(':' + hexPort) && f[3] === '0A').map(f => f[1]);
  same('serve: one listening socket, on 127.0.0.1', listeners, ['0100007F:' + hexPort]);
  const v6 = fs.existsSync('/proc/net/tcp6') ? fs.readFileSync('/proc/net/tcp6', 'utf8').split('\n').slice(1)
    .map(l => l.trim().split(/\s+/)).filter(f => f.length > 3 && f[1].endsWith(':' + hexPort) && f[3] === '0A') : [];
  same('serve: none on IPv6', v6.length, 0);
  const others = Object.values(os.networkInterfaces()).flat().filter(a => a.family === 'IPv4' && !a.internal).map(a => a.address);
  for (const addr of others) {
    const refused = await new Promise(resolve => {
      const c = net.connect({ host: addr, port: port });
      c.on('connect', () => { c.destroy(); resolve(false); });
      c.on('error', e => resolve(e.code === 'ECONNREFUSED'));
    });
    check('serve: ' + addr + ':' + port + ' refuses connections', refused);
  }
  const page = await open(browser, url, true);
  same('serve: the page served draws its timelines', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => t.device)), ['cuda:0', 'cuda:1', 'host']);
  same('serve: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'serve.png') });
  await page.close();
  proc.kill('SIGINT');
  const [code, signal] = await Promise.race([exited, new Promise(r => setTimeout(() => r(['timeout', null]), 5000))]);
  same('serve: Ctrl-C ends it with status 0', [code, signal], [0, null]);
  same('serve: its last line says so', err.trim().split('\n').pop(), 'vramtrace: view: stopped serving');
}

// diff_base.json -> diff_new.json: alloc_a grew by 1 MiB, alloc_d is new, alloc_c gone.
async function caseCompare(browser) {
  const page = await open(browser, exportPage('compare', ['--base', path.join(DATA, 'diff_base.json'), path.join(DATA, 'diff_new.json')]));
  const diff = await page.$$eval('#vt-diff tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent)));
  // The sites are on cuda:0 and cuda:1: a devices column says which.
  same('compare: the diff table has a devices column', await page.$$eval('.vt-diff table th', ths => ths.map(t => t.textContent)),
    ['change', 'base', 'new', 'allocations (base → new)', 'devices', 'call site']);
  same('compare: the grown site first', diff[0], ['+1.00 MiB (1048576 B)', '1.00 MiB (1048576 B)', '2.00 MiB (2097152 B)', '1 → 2', 'cuda:0', 'alloc_a() at model.cpp:10 (train)']);
  same('compare: the gone site last', diff[diff.length - 1], ['-4.00 KiB (4096 B)', '4.00 KiB (4096 B)', '0 B', '1 → 0', 'cuda:1', 'alloc_c() at data.cpp:30 (train)']);
  same('compare: both timelines per device', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => t.device)),
    ['cuda:0', 'cuda:0', 'cuda:1', 'cuda:1', 'host', 'host']);
  // The highest column of each (what the scale shows); allocations made at the dump are drawn too.
  same('compare: the scales of the timelines', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => t.max)),
    [5243392, 6291968, 4096, 8192, 100, 100]);
  same('compare: aligned at the first allocations', await text(page, '.vt-align'), 'The two runs are aligned at their first allocations (time 0).');
  const axes = await page.evaluate(() => [0, 1, 2, 3].map(i => window.vramtraceViewer.axis(i).top));
  same('compare: one vertical scale for both runs of a device', [axes[0] === axes[1], axes[2] === axes[3]], [true, true]);
  // Unchanged call sites (same bytes and allocations in both) are hidden until asked for.
  const shownRows = diff.length;
  const note = await text(page, '.vt-diff-hidden');
  const hiddenCount = /^(\d+) unchanged call sites? hidden\.$/.exec(note);
  same('compare: unchanged sites hidden, and counted', note, '2 unchanged call sites hidden.');
  check('compare: no unchanged row shown', diff.every(r => !(r[0] === '0 B' && r[1] === r[2] && r[3].split(' → ')[0] === r[3].split(' → ')[1])), JSON.stringify(diff));
  await page.click('#vt-diff-unchanged');
  same('compare: the toggle shows them', (await page.$$('#vt-diff tr')).length, shownRows + (hiddenCount ? +hiddenCount[1] : 0));
  same('compare: the composition names its run', await text(page, '#vt-comp-title'), 'Live at the dump on cuda:0 (6.000 µs) in new: 6.00 MiB (6291968 B) in 4 allocations');
  same('compare: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'compare.png'), fullPage: true });
  await page.close();

  // Two runs that share a mark are aligned at it: the mark is time 0 of both.
  const base = JSON.parse(fs.readFileSync(path.join(DATA, 'export_input.json')));
  const cur = JSON.parse(JSON.stringify(base));
  for (const e of cur.events) e.time_ns += 1e9;
  const page2 = await open(browser, exportPage('compare-marks', ['--base', writeJson('mark-base', base), writeJson('mark-new', cur)]));
  await page2.selectOption('#vt-align', 'mark:0');
  same('compare: aligned at the chosen shared mark', await text(page2, '.vt-align'), 'The two runs are aligned at their shared mark "epoch "1" <a;b>" (time 0).');
  same('compare: the view spans both runs around the mark', await page2.evaluate(() => window.vramtraceViewer.full()), { t0: -1e9, t1: 3.5e9 });
  await page2.click('#vt-from-start');
  same('compare: from the process starts', await page2.evaluate(() => window.vramtraceViewer.full()), { t0: -2.5e9, t1: 3.5e9 });
  await page2.close();

  // CUDA's start-up 2 ms longer in the new run: by default the first allocations line up, read
  // from the pixels (the first column each base canvas draws a band in, at the bottom row).
  const late = JSON.parse(JSON.stringify(base));
  for (const list of [late.events, late.allocations, late.ooms, late.peaks]) for (const e of list) e.time_ns += 2e6;
  late.process.dump_monotonic_ns += 2e6;
  late.process.dump_time_ns += 2e6;
  const page3 = await open(browser, exportPage('compare-startup', ['--base', writeJson('startup-base', base), writeJson('startup-new', late)]));
  const firstColumns = await page3.evaluate(() => Array.from(document.querySelectorAll('.vt-tl canvas.vt-base')).slice(0, 2).map(c => {
    const row = c.getContext('2d').getImageData(0, 217, c.width, 1).data;
    for (let x = 84; x < c.width; x++) if (row[4 * x + 3] > 0) return x;
    return -1;
  }));
  check('compare: first allocations aligned within 1 px', firstColumns[0] >= 84 && Math.abs(firstColumns[0] - firstColumns[1]) <= 1, JSON.stringify(firstColumns));
  await page3.screenshot({ path: path.join(WORK, 'compare-startup.png'), fullPage: true });
  await page3.close();
}

// Hostile strings from the security issue: markup and script in every string the page shows,
// control characters, a 3000-frame stack, the highest ordinal, a size of 2^64 - 1.
async function caseHostile(browser) {
  const s = JSON.parse(fs.readFileSync(path.join(DATA, 'export_input.json')));
  const evil = '<img src=x onerror="window.__pwned=1">';
  const evil2 = '</script><script>window.__pwned=2</script><!--';
  s.process.command_line = ['<svg onload="window.__pwned=3">', evil2];
  s.process.host = '<b id="pwned-host">host</b>';
  s.frames[1].function = evil;
  s.frames[1].inlined[0].function = evil2;
  s.frames[2].function = 'main\u001b[2J\rname\u0007';
  s.frames[4].file = '/src/<iframe src="javascript:window.__pwned=4">.cpp';
  // A 100,000-character name (cuda:1's frame worker(int)).
  s.frames[4].function = 'LONG' + 'w'.repeat(100000) + '<br>';
  for (const e of s.events) if (e.type === 'mark') e.label = '<script>window.__pwned=5</script>';
  // A 3000-frame stack for the host allocation, a huge size and the highest ordinal.
  const first = s.frames.length;
  for (let i = 0; i < 3000; i++) s.frames.push({ address: '0x' + (0x600000 + i).toString(16), module: 0, module_offset: '0x' + i.toString(16), function: 'deep' + i + '<i>', file: '', line: 0 });
  s.stacks.push({ id: 4, frames: Array.from({ length: 3000 }, (_, i) => first + i), call_site: 0 });
  s.allocations[0].stack = 4;
  for (const e of s.events) if (e.type === 'alloc' && e.device === -1) e.stack = 4;
  for (const pk of s.peaks) if (pk.device === -1) pk.sites[0].stack = 4;
  s.devices.push({ device: 1023, current_bytes: 'U64MAX', peak_bytes: 'U64MAX', allocation_count: 1, free_count: 0, total_allocated_bytes: 'U64MAX', total_freed_bytes: 0 });
  s.allocations.push({ address: '0x7f9000000000', size: 'U64MAX', kind: 'device', device: 1023, api: '<u>cudaMalloc</u>', stream: '0xffffffffffffffff', thread_id: 4294967295, time_ns: 4600000000, stack: 3 });
  // NVTX range stacks and start/end intervals named with markup, control characters and 50,000
  // characters: cuda:0's allocation in the first stack, cuda:1's in the long one.
  const evilRange = '<img src=x onerror="window.__pwned=6">';
  const longRange = 'RANGE' + 'r'.repeat(50000) + '<br>';
  s.nvtx_ranges = [{ id: 1, domains: ['<b>dom</b>', ''], names: [evilRange, 'ctl\u001b[31m\r\u0007'] }, { id: 2, domains: [''], names: [longRange] }];
  s.allocations[1].range = 1;
  s.allocations[2].range = 2;
  s.nvtx_intervals = [{ domain: '<svg onload="window.__pwned=7">', name: evil2, start_ns: 1100000000, end_ns: 2000000000, start_thread: 1, end_thread: 1 },
    { domain: '', name: 'I' + 'i'.repeat(50000) + '\u001b', start_ns: 2100000000, start_thread: 2 }];
  const file = writeJson('hostile', s);
  const page = await open(browser, exportPage('hostile', [file]));
  same('hostile: no script of the snapshot ran', await page.evaluate(() => window.__pwned === undefined), true);
  same('hostile: no element made from a string', await page.evaluate(() =>
    document.querySelectorAll('img, svg, iframe, i, u, #pwned-host').length), 0);
  same('hostile: only the page\'s two scripts', await page.evaluate(() => document.scripts.length), 2);
  same('hostile: the timelines, the ordinal 1023 among them', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => t.device)),
    ['cuda:0', 'cuda:1', 'cuda:1023', 'host']);
  const p = await at(page, 0, 3e9, 0.5 * MiB);
  await page.mouse.move(p.x, p.y);
  const tip = await text(page, '#vt-tip');
  check('hostile: names in the hover are text', tip.includes('  ' + evil + ' at /src/train.cpp:42') &&
    tip.includes(evil2 + ' at /src/alloc.h:7 (inlined)') && tip.includes('main\\x1b[2J\\x0dname\\x07 at /src/train.cpp:97'), tip);
  same('hostile: the range stack in the hover is text', tip.split('\n')[4], 'NVTX range: <b>dom</b>:' + evilRange + ' > ctl\\x1b[31m\\x0d\\x07');
  await page.mouse.click(p.x, p.y);
  same('hostile: the range stack in the table by range is text', (await page.$$eval('#vt-ranges td.site', es => es.map(e => e.textContent))),
    ['<b>dom</b>:' + evilRange + ' > ctl\\x1b[31m\\x0d\\x07']);
  const names = await texts(page, '#vt-flame .fn');
  check('hostile: names in the flame graph are text', names.includes(evil + ' at /src/train.cpp:42') && names.includes(evil2 + ' at /src/alloc.h:7 (inlined)'), JSON.stringify(names));
  same('hostile: the page title is text', await page.title(), 'vramtrace: <svg onload="window.__pwned=3"> ' + evil2);
  // The host allocation's 3000-frame stack: the flame graph draws the root, a marker and 512 frames.
  const host = await page.evaluate(() => window.vramtraceViewer.timelines().findIndex(t => t.device === 'host'));
  const q = await at(page, host, 4e9, 2048);
  await page.mouse.click(q.x, q.y);
  const deep = await texts(page, '#vt-flame .fn');
  same('hostile: a 3000-frame stack draws 514 rows', deep.length, 514);
  same('hostile: one node per row', await page.$$eval('#vt-flame .fn', es => new Set(es.map(e => e.style.top)).size), 514);
  same('hostile: below the root, a marker says what was left out', deep.slice(0, 3), ['all', '(2488 more frames not drawn)', 'deep511<i>']);
  same('hostile: the leaf is drawn', deep[513], 'deep0<i>');
  await page.mouse.move(q.x, q.y);
  const deepTip = (await text(page, '#vt-tip')).split('\n');
  same('hostile: the hover of a deep stack is bounded', deepTip.slice(-2), ['  deep39<i>', '  ... 473 more frames']);
  // Six lines before the stack (the NVTX range among them), then the 513 frames.
  check('hostile: the pinned stack is whole', (await text(page, '#vt-pinned')).split('\n').length === 6 + 513, (await text(page, '#vt-pinned')).split('\n').length);
  const big = await page.evaluate(() => window.vramtraceViewer.timelines().findIndex(t => t.device === 'cuda:1023'));
  const r = await at(page, big, 4.8e9, 1e18);
  await page.mouse.move(r.x, r.y);
  same('hostile: 2^64 - 1 bytes', (await text(page, '#vt-tip')).split('\n').slice(0, 2),
    ['16.00 EiB on cuda:1023 at 0x7f9000000000', 'api <u>cudaMalloc</u>, stream 0xffffffffffffffff, thread 4294967295']);
  // The long name: whole in the flame graph's node, which stays inside the graph.
  const c1 = await page.evaluate(() => window.vramtraceViewer.timelines().findIndex(t => t.device === 'cuda:1'));
  const w = await at(page, c1, 4e9, MiB);
  await page.mouse.click(w.x, w.y);
  const long = await page.$$eval('#vt-flame .fn', es => es.map(e => [e.textContent.length, e.getBoundingClientRect().right <= e.parentNode.getBoundingClientRect().right + 1]));
  same('hostile: a 100,000-character name is one node, inside the graph', long.filter(x => x[0] > 100000), [[100004 + 4 + ' at /src/<iframe src="javascript:window.__pwned=4">.cpp:120'.length, true]]);
  same('hostile: the table cuts the long call site', (await rows(page))[0][3].slice(1990), 'wwwwwwwwww… (98075 more characters)');
  same('hostile: the table by range cuts the long range name', (await page.$$eval('#vt-ranges td.site', es => es.map(e => e.textContent.slice(1990)))),
    ['rrrrrrrrrr… (48009 more characters)']);
  await page.selectOption('#vt-colour', 'range');
  const legend = await texts(page, '#vt-legend .vt-key');
  same('hostile: the legend of range stacks is text, the long one cut', [legend.length, legend[0], legend[1].slice(1990), legend[2]],
    [3, '<b>dom</b>:' + evilRange + ' > ctl\\x1b[31m\\x0d\\x07', 'rrrrrrrrrr… (48009 more characters)', '(no range)']);
  let iv = await page.evaluate(() => window.vramtraceViewer.intervalPoint(0, 0));
  await page.mouse.move(iv.x, iv.y);
  same('hostile: an interval\'s name and domain in the hover are text', (await text(page, '#vt-tip')).split('\n').slice(0, 2),
    ['NVTX interval: ' + evil2, 'domain: <svg onload="window.__pwned=7">']);
  iv = await page.evaluate(() => window.vramtraceViewer.intervalPoint(0, 1));
  await page.mouse.move(iv.x, iv.y);
  const ivTip = (await text(page, '#vt-tip')).split('\n');
  same('hostile: a 50,000-character interval name, its control character visible', [ivTip[0].length, ivTip[0].slice(-6), ivTip[3]],
    ['NVTX interval: '.length + 50001 + 4, 'ii\\x1b', 'still open at the dump (5.000 s)']);
  same('hostile: still no element made from a string', await page.evaluate(() => document.querySelectorAll('img, svg, iframe, i, u').length +
    Array.from(document.querySelectorAll('b')).filter(e => e.textContent === 'dom').length), 0);
  same('hostile: still no script of the snapshot ran', await page.evaluate(() => window.__pwned === undefined), true);
  same('hostile: the page is no wider than the window', await page.evaluate(() => document.documentElement.scrollWidth), 1280);
  same('hostile: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'hostile.png'), fullPage: true });
  await page.close();
}

// What the page says when it cannot show everything: no history; a wrapped one. And the pools.
async function caseHistory(browser) {
  const s = JSON.parse(fs.readFileSync(path.join(DATA, 'export_input.json')));
  const pooled = JSON.parse(JSON.stringify(s));
  pooled.pools = [{ handle: '0x5000', device: 0, is_default: true, reserved_bytes: 8 * MiB, used_bytes: 6 * MiB, reserved_high_bytes: 16 * MiB, used_high_bytes: 12 * MiB },
    { handle: '0x6000', device: 1, is_default: false, reserved_bytes: 2 * MiB, used_bytes: 0, reserved_high_bytes: 2 * MiB, used_high_bytes: MiB }];
  let page = await open(browser, exportPage('pools', [writeJson('pools', pooled)]));
  same('pools: reserved vs used per pool', await page.$$eval('.vt-pools tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent))), [
    ['device', 'pool', 'reserved', 'used', 'used / reserved', 'reserved high', 'used high'],
    ['cuda:0', '0x5000 (default)', '8.00 MiB (8388608 B)', '6.00 MiB (6291456 B)', ' 75.0%', '16.00 MiB (16777216 B)', '12.00 MiB (12582912 B)'],
    ['cuda:1', '0x6000', '2.00 MiB (2097152 B)', '0 B', ' 0.0%', '2.00 MiB (2097152 B)', '1.00 MiB (1048576 B)']]);
  await page.close();
  // Nothing tracked at all.
  const empty = JSON.parse(JSON.stringify(s));
  Object.assign(empty, { devices: [], allocations: [], events: [], peaks: [], ooms: [], stacks: [], frames: [], modules: [] });
  page = await open(browser, exportPage('empty', [writeJson('empty', empty)]));
  same('empty: the page says so', await texts(page, '.vt-timelines > p'), ['No tracked memory.']);
  same('empty: no script error', page.vtErrors, []);
  await page.close();
  // VMM: 64 MiB of address space reserved, 6 MiB mapped of 8 MiB of physical handles on cuda:0.
  const vmm = JSON.parse(JSON.stringify(s));
  const vmmAlloc = (address, size, kind, device) => ({ address, size, kind, device, api: 'cuMemMap', stream: '0x0', thread_id: 1, time_ns: 4000000000, stack: 0 });
  vmm.allocations.push(vmmAlloc('0x7e0000000000', 64 * MiB, 'va_reservation', -2), vmmAlloc('0x7e0000000000', 6 * MiB, 'vmm_mapping', 0),
    vmmAlloc('0x1', 8 * MiB, 'vmm_physical', 0));
  page = await open(browser, exportPage('vmm', [writeJson('vmm', vmm)]));
  same('vmm: reserved address space', await text(page, '.vt-va'), 'Reserved address space (no device): 64.00 MiB (67108864 B)');
  same('vmm: mapped vs physical per device', await page.$$eval('.vt-vmm tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent))),
    [['device', 'mapped', 'physical handles'], ['cuda:0', '6.00 MiB (6291456 B)', '8.00 MiB (8388608 B)']]);
  same('vmm: no script error', page.vtErrors, []);
  await page.close();
  const none = JSON.parse(JSON.stringify(s));
  none.events = [];
  none.event_history = { capacity: 0, recorded: 0, wrapped: false, complete_from_ns: 0 };
  page = await open(browser, exportPage('no-history', [writeJson('no-history', none)]));
  same('history: none, the page says so', await texts(page, '#vt-app > .note'), ['The snapshot has no event history (VRAMTRACE_EVENTS=0, or an older vramtrace): the timeline shows only the allocations live at the dump, from the times they were made; memory freed before the dump is not shown.']);
  same('history: none, only the live allocations drawn', await page.evaluate(() => window.vramtraceViewer.timelines().map(t => [t.device, t.bands])),
    [['cuda:0', 1], ['cuda:1', 1], ['host', 1]]);
  await page.close();
  const wrapped = JSON.parse(JSON.stringify(s));
  wrapped.events = wrapped.events.filter(e => e.time_ns >= 2500000000);
  wrapped.event_history = { capacity: 5, recorded: 7, wrapped: true, complete_from_ns: 2500000000 };
  page = await open(browser, exportPage('wrapped', [writeJson('wrapped', wrapped)]));
  same('history: wrapped, the page says so', await texts(page, '#vt-app > .note'), ['The event history wrapped (7 events recorded, 5 kept): before 1.50 s the timeline shows only the allocations freed or live later, from the start of the kept history (their start is not known); raise VRAMTRACE_EVENTS to keep more.']);
  const p = await at(page, 0, 1.8e9, 2 * MiB);
  await page.mouse.move(p.x, p.y);
  same('history: a band from before the kept history', (await text(page, '#vt-tip')).split('\n')[2], 'allocated before 1.500 s (before the kept history), freed at 2.000 s, lived 0.500 s');
  await page.close();
}

// A PyTorch snapshot (the one recorded on the H200 in tests/unit/report/data, or one that
// tests/gpu/run_viewer.sh wrote: "python=FILE@EXPECT", EXPECT the text the first call site at the
// peak must hold): its Python lines show in the flame graph and in the stack of a band, pinned by
// a click.
async function casePython(browser, arg) {
  const [file, expect] = arg.split('@');
  const page = await open(browser, exportPage('python', [file]));
  const flame = await texts(page, '#vt-flame .fn');
  check('python: the flame graph names Python lines', flame.some(n => / at .*\.py:\d+ \(python\)$/.test(n)), JSON.stringify(flame.slice(0, 12)));
  if (expect) {
    const top = (await rows(page))[0];
    check('python: the first call site at the peak is ' + expect, top && top[3].includes(expect), JSON.stringify(top));
  }
  // A band whose stack has a Python frame: a click pins it, its whole stack names the line.
  const band = await page.evaluate(() => window.vramtraceViewer.bandWhere(0, '\\.py:\\d+ \\(python\\)$'));
  check('python: a band of the first GPU has a Python stack', band !== null);
  if (band) {
    const p = await at(page, 0, band.t, band.bytes);
    await page.mouse.click(p.x, p.y);
    const pinned = await text(page, '#vt-pinned');
    check('python: the pinned stack of that band names Python lines', / at .*\.py:\d+ \(python\)\n/.test(pinned + '\n'), pinned.slice(0, 400));
  }
  // Runtime frames hidden (the default): libc's start-up and the interpreter's C frames go, so
  // the row under the root is the script's own Python frame.
  const f1 = (await page.evaluate(() => window.vramtraceViewer.flame())).filter(r => r.depth === 1).map(r => r.name);
  check('python: with runtime frames hidden, the first row is the script\'s Python frame',
    f1.length > 0 && f1.every(n => /^<module> at .*torch_categories\.py:\d+ \(python\)$/.test(n)), JSON.stringify(f1));
  await page.click('#vt-hide-runtime');
  const raw1 = (await page.evaluate(() => window.vramtraceViewer.flame())).filter(r => r.depth === 1).map(r => r.name);
  check('python: with them shown, the first row is native start-up', raw1.length > 0 && raw1.every(n => !/\(python\)$/.test(n)), JSON.stringify(raw1));
  await page.click('#vt-hide-runtime');
  await page.click('#vt-python-only');
  const py = await page.evaluate(() => window.vramtraceViewer.flame());
  const notPython = py.filter(r => r.depth > 0 && !/\(python\)$/.test(r.name) && r.site === null).map(r => r.name);
  same('python: Python frames only (and the call sites of stacks without any)', notPython, []);
  await page.screenshot({ path: path.join(WORK, 'python-frames-only.png'), fullPage: true });
  await page.click('#vt-python-only');
  // The live-at-exit table names sites with their via; its swatches still have the colour of the
  // site's bands (the legend's).
  const pyLegend = await page.$$eval('#vt-legend .vt-key', ks => ks.map(k => [k.querySelector('.vt-key-text').textContent,
    getComputedStyle(k.querySelector('.vt-swatch')).backgroundColor]));
  const exitSw = await page.$$eval('#vt-exit-sites td.site', tds => tds.map(td => [td.textContent, getComputedStyle(td.querySelector('.vt-swatch')).backgroundColor]));
  const pairs = [];
  for (const [label, colour] of pyLegend)
    for (const [site, sw] of exitSw)
      if (site === label || site.startsWith(label + ' via ') || site.startsWith(label + ' [no Python frames]')) pairs.push([site, sw === colour]);
  // Eleven of the table's sites have a legend entry (the legend lists the 12 heaviest at the peak).
  same('python: live-at-exit swatches have their sites\' legend colours', [pairs.length, pairs.filter(p => !p[1]).map(p => p[0])], [11, []]);
  const pa = await checkAxis('python: cuda:0 axis', page, 0);
  check('python: the axis top is the first whole step at or above the peak', pa.top - pa.step < pa.peak && pa.peak > 0, JSON.stringify(pa));
  same('python: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'python.png'), fullPage: true });
  await page.close();
}

// NVTX ranges (docs/nvtx.md) on export_input.json: the 1 MiB allocation of cuda:0 was made inside
// "step > forward", cuda:1's inside "ml:backward"; the 3 MiB one, freed before the dump, has no
// live allocation to take a range from ("(no range)"); the peak of cuda:0 by range.
function nvtxSnapshot() {
  const s = JSON.parse(fs.readFileSync(path.join(DATA, 'export_input.json')));
  s.nvtx_ranges = [{ id: 1, domains: ['', ''], names: ['step', 'forward'] }, { id: 2, domains: ['ml'], names: ['backward'] }];
  for (const a of s.allocations) if (a.device === 0) a.range = 1; else if (a.device === 1) a.range = 2;
  for (const pk of s.peaks) if (pk.device === 0) pk.ranges = [{ range: 0, bytes: 3 * MiB, count: 1 }, { range: 1, bytes: MiB, count: 1 }];
  return s;
}
const rangeRows = page => page.$$eval('#vt-ranges tr', trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent)));
// The colour drawn at a point of the base canvas and the colour of a legend swatch, as "r,g,b".
async function pixelAt(page, i, p) {
  return page.evaluate(([i, x, y]) => {
    const c = document.querySelectorAll('.vt-base')[i], r = c.getBoundingClientRect(), k = c.width / r.width;
    const d = c.getContext('2d').getImageData(Math.round((x - r.left) * k), Math.round((y - r.top) * k), 1, 1).data;
    return d[0] + ',' + d[1] + ',' + d[2];
  }, [i, p.x, p.y]);
}
async function swatch(page, n) {
  return page.evaluate(n => {
    const m = getComputedStyle(document.querySelectorAll('#vt-legend .vt-swatch')[n]).backgroundColor.match(/\d+/g);
    return m.slice(0, 3).join(',');
  }, n);
}
async function caseNvtx(browser) {
  let page = await open(browser, exportPage('no-nvtx', [path.join(DATA, 'export_input.json')]));
  same('nvtx: without ranges no NVTX colouring', await page.$$eval('#vt-colour option', os => os.map(o => o.value)), ['site', 'category']);
  same('nvtx: without ranges no table by range', await page.$eval('.vt-by-range', e => e.style.display), 'none');
  await page.close();
  page = await open(browser, exportPage('nvtx', [writeJson('nvtx', nvtxSnapshot())]));
  same('nvtx: the colour menu offers NVTX ranges', await page.$$eval('#vt-colour option', os => os.map(o => o.textContent)),
    ['colour by call site', 'colour by category', 'colour by NVTX range']);
  await page.selectOption('#vt-colour', 'range');
  same('nvtx: the legend lists the range stacks', await texts(page, '#vt-legend .vt-key'), ['step > forward', 'ml:backward', '(no range)']);
  // The 1 MiB band (from the history, matched to its live allocation) in the colour of its range.
  // (Points off the lines of the peak, the mark and the OOM, which are drawn over the bands.)
  same('nvtx: a band of "step > forward" has its colour', await pixelAt(page, 0, await at(page, 0, 3.5e9, 0.5 * MiB)), await swatch(page, 0));
  same('nvtx: the band freed before the dump has the colour of "(no range)"', await pixelAt(page, 0, await at(page, 0, 1.25e9, 2.5 * MiB)),
    await swatch(page, 2));
  let p = await at(page, 0, 3e9, 0.5 * MiB);
  const q = await at(page, 0, 1.5e9, 2.5 * MiB);
  await page.mouse.move(q.x, q.y);
  same('nvtx: the hover names the range stack', (await text(page, '#vt-tip')).split('\n').slice(3, 5),
    ['call site: ?? (train+0x2000)', 'NVTX range: (no range)']);
  await page.mouse.click(p.x, p.y);
  same('nvtx: the pinned band names its range stack', (await text(page, '#vt-pinned')).split('\n')[4], 'NVTX range: step > forward');
  check('nvtx: a click at 3 s', /^Live on cuda:0 at (2\.99\d|3\.00\d) s: 1\.00 MiB \(1048576 B\) in 1 allocation$/.test(await text(page, '#vt-comp-title')));
  same('nvtx: by NVTX range at 3 s', await rangeRows(page), [['1.00 MiB (1048576 B)', '1', '100.0%', 'step > forward']]);
  p = await at(page, 0, 1.5e9, 0.5 * MiB);
  await page.mouse.click(p.x, p.y);
  same('nvtx: by NVTX range at 1.5 s', await rangeRows(page),
    [['3.00 MiB (3145728 B)', '1', '75.0%', '(no range)'], ['1.00 MiB (1048576 B)', '1', '25.0%', 'step > forward']]);
  await page.click('#vt-dump');
  same('nvtx: by NVTX range at the dump', await rangeRows(page), [['1.00 MiB (1048576 B)', '1', '100.0%', 'step > forward']]);
  await page.keyboard.press('p');
  same('nvtx: the peak by NVTX range, from the peak counters', await rangeRows(page),
    [['3.00 MiB (3145728 B)', '1', '75.0%', '(no range)'], ['1.00 MiB (1048576 B)', '1', '25.0%', 'step > forward']]);
  // cuda:1's band (live at the dump only) takes its allocation's range.
  const c1 = await page.evaluate(() => window.vramtraceViewer.timelines().findIndex(t => t.device === 'cuda:1'));
  p = await at(page, c1, 4e9, MiB);
  await page.mouse.move(p.x, p.y);
  same('nvtx: the hover of cuda:1\'s band', (await text(page, '#vt-tip')).split('\n')[4], 'NVTX range: ml:backward');
  await page.selectOption('#vt-colour', 'site');
  same('nvtx: coloured by call site, the legend lists the sites', await texts(page, '#vt-legend .vt-key'), ['?? (train+0x2000)',
    'worker(int) at /src/train.cpp:120 (train)',
    'alloc_helper<float>(unsigned long) at /src/alloc.h:7 (inlined into make_buffer(unsigned long) at /src/train.cpp:42) (train)',
    '(no stack captured)']);
  same('nvtx: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'nvtx.png'), fullPage: true });
  await page.close();
}

// tests/cli/data/nvtx_intervals.json: export_input.json with NVTX start/end intervals (times from
// the process start): "step 1" 0.1 to 2.1 s, inside it ml "forward" 0.2 to 1.2 s (a second lane),
// "load" 2.5 to 3.0 s, io "prefetch" from 3.5 s, open at the dump (5.0 s).
async function caseIntervals(browser) {
  const page = await open(browser, exportPage('intervals', [path.join(DATA, 'nvtx_intervals.json')]));
  same('intervals: on every timeline, in lanes by overlap', await page.evaluate(() => [0, 1, 2].map(i => window.vramtraceViewer.intervals(i))),
    [0, 1, 2].map(() => [['step 1', 0], ['forward', 1], ['load', 0], ['prefetch', 0]]));
  const hover = async (i, k) => {
    const p = await page.evaluate(([i, k]) => window.vramtraceViewer.intervalPoint(i, k), [i, k]);
    await page.mouse.move(p.x, p.y);
    return text(page, '#vt-tip');
  };
  same('intervals: hover of "step 1"', await hover(0, 0),
    'NVTX interval: step 1\ndomain: (default domain)\nstarted at 0.100 s on thread 4242\nended at 2.100 s on thread 4242, lasted 2.000 s');
  same('intervals: hover of "forward", ended on another thread', await hover(0, 1),
    'NVTX interval: forward\ndomain: ml\nstarted at 0.200 s on thread 4242\nended at 1.200 s on thread 4243, lasted 1.000 s');
  same('intervals: hover of the open "prefetch"', await hover(1, 3),
    'NVTX interval: prefetch\ndomain: io\nstarted at 3.500 s on thread 4243\nstill open at the dump (5.000 s)');
  // The lanes sit below the axis: the marks keep their hover.
  const p = await at(page, 0, 1.5e9, 0);
  await page.mouse.move(p.x, p.y + 22);
  same('intervals: the mark keeps its hover', await text(page, '#vt-tip'), 'mark "epoch "1" <a;b>" at 1.500 s');
  same('intervals: no script error', page.vtErrors, []);
  await page.screenshot({ path: path.join(WORK, 'intervals.png'), fullPage: true });
  await page.close();
  // A member that is not an array of intervals: the file is refused, as for any other member.
  const bad = JSON.parse(fs.readFileSync(path.join(DATA, 'nvtx_intervals.json')));
  bad.nvtx_intervals[1].end_thread = 'x';
  const out = path.join(WORK, 'intervals-bad.html');
  fs.rmSync(out, { force: true });
  const r = spawnSync(VT, ['export', '-f', 'html', '-o', out, writeJson('intervals-bad', bad)], { encoding: 'utf8' });
  same('intervals: a bad record is refused', [r.status, r.stderr.split('\n').filter(l => l).map(l => l.slice(l.indexOf('.json: ') + 7)), fs.existsSync(out)],
    [1, ['nvtx_intervals[1].end_thread: expected an unsigned integer, got a string'], false]);
}

// The README's picture of the report: a fixture's page at 1280x800, written where PICTURE (the
// environment) says; the build's target report-picture copies it to docs/report.png.
async function casePicture(browser, snapshot) {
  const target = process.env.PICTURE;
  if (!target) { check('picture: PICTURE names the file to write', false); return; }
  const page = await open(browser, exportPage('picture', [snapshot]));
  await page.setViewportSize({ width: 1280, height: 800 });
  same('picture: no script error', page.vtErrors, []);
  const tmp = target + '.tmp.png';
  await page.screenshot({ path: tmp });
  await page.close();
  const png = fs.readFileSync(tmp);
  // IHDR: the signature, then width and height as 32-bit big-endian numbers at bytes 16 and 20.
  same('picture: a 1280x800 PNG', [png.subarray(1, 4).toString(), png.readUInt32BE(16), png.readUInt32BE(20)], ['PNG', 1280, 800]);
  fs.renameSync(tmp, target);
}

// --no-sandbox: CI runs the suite as root, where chromium's sandbox refuses to start;
// --disable-dev-shm-usage: a container's /dev/shm is often 64 MiB, too small for the renderer.
(async () => {
  let browser;
  try {
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM || 'chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  } catch (e) {
    console.log('FAIL chromium could not be started (' + (process.env.CHROMIUM || 'chromium') + '): ' + e.message.split('\n')[0]);
    process.exit(1);
  }
  try {
    for (const c of CASES) {
      if (c === 'report') await caseReport(browser);
      else if (c === 'compare') await caseCompare(browser);
      else if (c === 'marks') await caseMarks(browser);
      else if (c === 'serve') await caseServe(browser);
      else if (c === 'hostile') await caseHostile(browser);
      else if (c === 'history') await caseHistory(browser);
      else if (c === 'nvtx') await caseNvtx(browser);
      else if (c === 'intervals') await caseIntervals(browser);
      else if (c.startsWith('python=')) await casePython(browser, c.slice(7));
      else if (c.startsWith('picture=')) await casePicture(browser, c.slice(8));
      else check('known case ' + c, false);
    }
  } catch (e) {
    check('no exception', false, e.stack);
  }
  await browser.close();
  console.log(passed + ' passed, ' + failed + ' failed');
  process.exit(failed || !passed ? 1 : 0);
})();
