// Opens a trainprof report in headless Chromium (Debian's, driven by
// playwright-core) from file:// with the network off, and checks it as a
// person would see it. Run by tests/cli/report.py:
//
//   node report_browser.mjs REPORT.html CHECKS.json OUTDIR
//
// CHECKS: {"sections": [ids], "charts": [ids], "hover": [{chart, series,
// x, y, expect}], "sort": [{table, col}], "filter": {table, text},
// "texts": [{selector, expect}], "marks": [{chart, prefix, count}],
// "categories": [{chart, axis, min, max, named}]} (NAMED: one category of
// that name).
// Every chart must have drawn pixels; each hover must show EXPECT in the
// tooltip; each sort must order the column both ways. Screenshots of each
// section go to OUTDIR. Prints "ok ..." lines, exits 1 on the first failure
// (after writing what it could).
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

const [page_path, checks_path, outdir] = process.argv.slice(2);
if (!outdir) {
  console.error('usage: node report_browser.mjs REPORT.html CHECKS.json OUTDIR');
  process.exit(2);
}
const checks = JSON.parse(readFileSync(checks_path, 'utf8'));
mkdirSync(outdir, { recursive: true });
const failures = [];
const fail = (what) => { failures.push(what); console.log('FAIL ' + what); };
const ok = (what) => console.log('ok ' + what);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ offline: true, viewport: { width: 1300, height: 900 } });
  const page = await context.newPage();
  const errors = [], requests = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.type() + ': ' + m.text()); });
  page.on('pageerror', (e) => errors.push('exception: ' + e.message));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });
  await page.goto('file://' + resolve(page_path), { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 }).catch(() => fail('the page never finished drawing'));
  await page.waitForTimeout(300);

  // the sticky contents bar would cover the sections' screenshots
  await page.addStyleTag({ content: 'nav { position: static !important; }' });
  for (const id of checks.sections || []) {
    const s = await page.$('section#' + id);
    if (!s) { fail('section ' + id + ' is missing'); continue; }
    await s.screenshot({ path: `${outdir}/section-${id}.png` });
    ok('section ' + id + ' (screenshot section-' + id + '.png)');
  }
  await page.screenshot({ path: `${outdir}/page.png`, fullPage: true });

  // drawn content: inside the chart's plot area (its grid), at least 0.25%
  // of the pixels are in colour (a line across the plot is about 0.3%; an
  // empty plot, its grey grid lines alone, 0) (chroma over 40: series, not grey grid lines,
  // axes or text), over all of the chart's canvas layers (ECharts may draw a
  // series on a layer of its own)
  const drawn = await page.evaluate(() => {
    const out = {};
    for (const div of document.querySelectorAll('[data-chart]')) {
      const c = window.trainprofCharts[div.id], layers = Array.from(div.querySelectorAll('canvas'));
      if (!c || !layers.length) { out[div.id] = { inked: 0, colours: 0 }; continue; }
      const grid = c.getModel().getComponent('grid'), rect = grid && grid.coordinateSystem.getRect();
      const scale = layers[0].width / div.clientWidth;
      const x0 = Math.floor(rect.x * scale), y0 = Math.floor(rect.y * scale);
      const w = Math.max(1, Math.floor(rect.width * scale)), h = Math.max(1, Math.floor(rect.height * scale));
      const ink = new Uint8Array(w * h), colours = new Set();
      for (const layer of layers) {
        const d = layer.getContext('2d').getImageData(x0, y0, w, h).data;
        for (let p = 0; p < w * h; p += 3) {
          const i = 4 * p, r = d[i], g = d[i + 1], b = d[i + 2];
          if (d[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) {
            ink[p] = 1;
            if (colours.size < 64) colours.add((r >> 4) + ',' + (g >> 4) + ',' + (b >> 4));
          }
        }
      }
      let inked = 0;
      for (let p = 0; p < w * h; p += 3) inked += ink[p];
      out[div.id] = { inked: inked / Math.ceil(w * h / 3), colours: colours.size };
    }
    return out;
  });
  for (const id of checks.charts || []) {
    const d = drawn[id];
    if (!d) fail('chart ' + id + ' is missing');
    else if (d.inked < 0.0025) fail(`chart ${id} has no drawn content in its plot area (${(100 * d.inked).toFixed(2)}% in colour, ${d.colours} colours)`);
    else ok(`chart ${id} drawn (${(100 * d.inked).toFixed(1)}% of its plot area in colour, ${d.colours} colours)`);
  }

  for (const h of checks.hover || []) {
    const at = await page.evaluate(({ chart, series, x, y }) => {
      const c = window.trainprofCharts[chart];
      if (!c) return null;
      const dom = c.getDom();
      dom.scrollIntoView({ block: 'center' });
      const p = c.convertToPixel({ seriesIndex: series }, [x, y]);
      const r = dom.getBoundingClientRect();
      return { x: r.left + p[0], y: r.top + p[1] };
    }, h);
    if (!at) { fail('hover: no chart ' + h.chart); continue; }
    await page.mouse.move(at.x, at.y);
    await page.waitForTimeout(250);
    await page.mouse.move(at.x + 1, at.y);
    await page.waitForTimeout(400);
    const text = await page.evaluate(() => Array.from(document.querySelectorAll('.tp-tooltip'))
      .filter((t) => t.style.display !== 'none' && getComputedStyle(t).opacity !== '0').map((t) => t.textContent).join(' | '));
    if (text.includes(h.expect)) ok(`hover on ${h.chart} shows "${h.expect}"`);
    else fail(`hover on ${h.chart} at (${h.x}, ${h.y}) shows "${text}", not "${h.expect}"`);
    await page.screenshot({ path: `${outdir}/hover-${h.chart}.png` });
  }

  for (const s of checks.sort || []) {
    const th = await page.$(`table#${s.table} th[data-col="${s.col}"]`);
    if (!th) { fail(`sort: no column ${s.col} in ${s.table}`); continue; }
    const values = () => page.evaluate(({ table, col }) => {
      const t = document.getElementById(table);
      const i = Array.from(t.querySelectorAll('th')).findIndex((h) => h.dataset.col === col);
      return Array.from(t.querySelectorAll('tbody tr')).map((r) => Number(r.children[i].dataset.value));
    }, s);
    await th.click();
    const down = await values();
    await th.click();
    const up = await values();
    const sorted = (a, sign) => a.every((v, i) => i === 0 || sign * (v - a[i - 1]) >= 0);
    if (down.length > 1 && sorted(down, -1) && sorted(up, 1) && down[0] !== up[0]) ok(`table ${s.table} sorts by ${s.col} both ways (${down.length} rows)`);
    else fail(`table ${s.table} by ${s.col}: descending ${JSON.stringify(down.slice(0, 5))}, ascending ${JSON.stringify(up.slice(0, 5))}`);
  }

  // marks on a chart's lines (peaks, OOMs, steps): by name prefix, at least COUNT
  for (const m of checks.marks || []) {
    const names = await page.evaluate((chart) => {
      const c = window.trainprofCharts[chart];
      return c ? c.getOption().series.flatMap((s) => ((s.markLine && s.markLine.data) || []).map((d) => d.name)) : null;
    }, m.chart);
    const n = (names || []).filter((x) => x && x.startsWith(m.prefix)).length;
    if (n >= m.count) ok(`${m.chart} marks ${n} "${m.prefix}..."`);
    else fail(`${m.chart} marks ${n} "${m.prefix}...", want ${m.count}: ${JSON.stringify(names)}`);
  }

  // a category axis's length (ranks binned past 64): between MIN and MAX
  for (const a of checks.categories || []) {
    const n = await page.evaluate(({ chart, axis }) => {
      const c = window.trainprofCharts[chart];
      return c ? c.getOption()[axis][0].data.length : -1;
    }, a);
    if (n >= a.min && n <= a.max) ok(`${a.chart}'s ${a.axis} has ${n} categories`);
    else fail(`${a.chart}'s ${a.axis} has ${n} categories, want ${a.min}..${a.max}`);
    if (a.named) { // one category of that name (a bin holding the straggler)
      const names = await page.evaluate(({ chart, axis }) => window.trainprofCharts[chart].getOption()[axis][0].data, a);
      const hits = names.filter((x) => String(x) === a.named).length;
      if (hits === 1) ok(`${a.chart}'s ${a.axis} has "${a.named}"`);
      else fail(`${a.chart}'s ${a.axis} has ${hits} "${a.named}": ${JSON.stringify(names.slice(0, 8))}...`);
    }
  }

  for (const t of checks.texts || []) {
    const text = await page.evaluate((sel) => { const e = document.querySelector(sel); return e ? e.textContent : null; }, t.selector);
    if (text !== null && text.includes(t.expect)) ok(`${t.selector} says "${t.expect}"`);
    else fail(`${t.selector} says ${JSON.stringify(text)}, not "${t.expect}"`);
  }

  if (checks.filter) {
    const f = checks.filter;
    await page.fill(`input[aria-label="filter ${f.table}"]`, f.text);
    const rows = await page.evaluate((table) => Array.from(document.querySelectorAll(`#${table} tbody tr`)).map((r) =>
      Array.from(r.children).map((c) => (c.getAttribute('title') || '') + ' ' + c.textContent).join(' ')), f.table);
    if (rows.length >= 1 && rows.every((r) => r.toLowerCase().includes(f.text.toLowerCase()))) ok(`filter "${f.text}" keeps ${rows.length} matching rows of ${f.table}`);
    else fail(`filter "${f.text}" on ${f.table} kept ${rows.length} rows: ${JSON.stringify(rows.slice(0, 3))}`);
  }

  // every link inside the page lands on an element of it
  const dangling = await page.evaluate(() => Array.from(document.querySelectorAll('a[href^="#"]'))
    .map((a) => a.getAttribute('href').slice(1)).filter((id) => id && !document.getElementById(id)));
  if (dangling.length) fail('links to nothing: ' + dangling.join(', '));
  else ok('every link in the page has its target');

  if (errors.length) fail('console errors: ' + errors.join('; '));
  else ok('no console errors or warnings');
  if (requests.length) fail('the page asked the network for ' + requests.slice(0, 5).join(', '));
  else ok('no network request');
} finally {
  await browser.close();
}
process.exit(failures.length ? 1 : 0);
