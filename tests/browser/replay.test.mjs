// make test-browser: the real panel bundle in Debian's headless Chromium,
// with frames from the real datasource (pkg/plugin) tracing on the stand-in
// through pkg/viewer. It plays, steps, zooms, filters by operator, selects
// an event, checks what is drawn (pixels and exposed state), fails on any
// console error, and writes screenshots to tests/output/. The findings and
// compare cases are in findings-compare.mjs, the viewer's own tools in
// viewertool.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { animationFrames as frames, launchBrowser, openHarness, root, startServer, watchConsole } from './lib.mjs';
import { findingsAndCompare } from './findings-compare.mjs';
import { wholeScreen } from './screen.mjs';
import { viewerTool } from './viewertool.mjs';
import { queryInView } from './header.mjs';
import { planDiagram } from './diagram.mjs';
import { statementTree } from './statements.mjs';

const HASH_JOIN =
  "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'";
const SEEK = 'SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42';
const PARALLEL =
  'SELECT l.ProductID, SUM(l.Quantity) AS Units FROM dbo.OrderLines AS l GROUP BY l.ProductID OPTION (MAXDOP 4)';
const out = path.join(root, 'tests', 'output');
fs.mkdirSync(out, { recursive: true });

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok    ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL  ${name}: ${e.message}`);
  }
}
// every assertion says what failed: one without a message fails even when it holds
function assert(cond, msg) {
  if (typeof msg !== 'string' || msg.trim() === '') {
    throw new Error('assert called without a message');
  }
  if (!cond) {
    throw new Error(msg);
  }
}

// in-page helpers
const state = (page) => page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get());
const stats = (page) =>
  page.evaluate(() => {
    const s = window.__QUERYREPLAY_DEBUG__.panels[0].stats;
    return {
      baseDraws: s.baseDraws,
      overlayFrames: s.overlayFrames,
      lanes: s.lanes,
      layout: s.layout,
      detailFetches: s.detailFetches,
      detailWindows: s.detailWindows,
    };
  });
const set = (page, patch) => page.evaluate((p) => window.__QUERYREPLAY_DEBUG__.panels[0].store.set(p), patch);

/** Non-background pixels along the middle row of a lane (or plan row), from the base canvas. */
async function probe(page, which) {
  return page.evaluate((w) => {
    const s = window.__QUERYREPLAY_DEBUG__.panels[0].stats;
    const L = s.layout;
    const box = w.lane ? L.lanes.find((l) => l.name === w.lane) : L.plan.rows.find((r) => r.nodeId === w.node);
    const c = document.querySelector('[data-testid="qr-timeline-base"]');
    const dpr = c.width / L.width;
    const ys = [box.y + box.h * 0.5, box.y + box.h * 0.75].map((y) => Math.floor(y * dpr));
    const ctx = c.getContext('2d');
    const counts = new Map();
    const px = [];
    for (const y of ys) {
      const d = ctx.getImageData(Math.ceil(L.plotX * dpr), y, Math.floor(L.plotW * dpr), 1).data;
      for (let x = 0; x < d.length / 4; x++) {
        const key = `${d[4 * x]},${d[4 * x + 1]},${d[4 * x + 2]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        px.push([x, key]);
      }
    }
    const bg = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const marks = px.filter(([, k]) => k !== bg);
    return {
      marks: marks.length,
      firstX: marks.length ? L.plotX + marks[0][0] / dpr : -1,
      y: box.y + box.h * 0.75,
      colors: counts.size,
    };
  }, which);
}

/** Non-background colours along the middle of a lane, most frequent first: [[r,g,b key, pixels], …]. */
async function laneColours(page, lane) {
  return page.evaluate((name) => {
    const L = window.__QUERYREPLAY_DEBUG__.panels[0].stats.layout;
    const box = L.lanes.find((l) => l.name === name);
    const c = document.querySelector('[data-testid="qr-timeline-base"]');
    const dpr = c.width / L.width;
    const counts = new Map();
    for (const f of [0.55, 0.7, 0.85]) {
      const y = Math.floor((box.y + box.h * f) * dpr);
      const d = c.getContext('2d').getImageData(Math.ceil(L.plotX * dpr), y, Math.floor(L.plotW * dpr), 1).data;
      for (let i = 0; i < d.length; i += 4) {
        const key = `${d[i]},${d[i + 1]},${d[i + 2]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    return sorted.slice(1); // the most frequent colour is the lane background
  }, lane);
}

/** One pixel of the read lane: its label bar (the lane colour) or its background at the plot's left edge. */
async function readLanePixel(page, where) {
  return page.evaluate((w) => {
    const L = window.__QUERYREPLAY_DEBUG__.panels[0].stats.layout;
    const box = L.lanes.find((l) => l.name === 'read');
    const c = document.querySelector('[data-testid="qr-timeline-base"]');
    const dpr = c.width / L.width;
    const [x, y] = w === 'label' ? [3, box.y + box.h / 2] : [L.plotX + 1, box.y + 1];
    const d = c.getContext('2d').getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data;
    return [d[0], d[1], d[2]];
  }, where);
}

const server = await startServer();
const { context, close } = await launchBrowser();
const errors = [];
let traceId = '';
try {
  const page = await context.newPage();
  watchConsole(page, errors);

  await check('a trace run on the stand-in through the real datasource is drawn', async () => {
    await openHarness(page, server.url, {
      query: JSON.stringify({
        queryType: 'trace',
        sql: HASH_JOIN,
        database: 'QueryReplayDemo',
        options: { clearBufferPool: true, disableReadAhead: true },
      }),
      width: 1400,
      height: 560,
      title: 'Hash join — live trace on the stand-in',
    });
    traceId = await page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
    assert(/^[0-9a-f]{32}$/.test(traceId), `trace id ${traceId}`);
    const s = await stats(page);
    assert(s.lanes.read.kind === 'marks' && s.lanes.read.drawn > 0, `read lane ${JSON.stringify(s.lanes.read)}`);
    assert(s.lanes.plan.drawn > 0, 'no plan bars');
    const read = await probe(page, { lane: 'read' });
    assert(read.marks > 0, 'no read marks in the pixels');
    const planRoot = await probe(page, { node: s.layout.plan.rows[0].nodeId });
    assert(planRoot.marks > 20, `root operator bar too small: ${planRoot.marks} px`);
  });

  await check('play moves the playhead and pause stops it', async () => {
    const line = () => page.$eval('[data-testid="qr-playhead-line"]', (e) => e.style.transform);
    const x0 = await line();
    await page.click('[data-testid="qr-play"]');
    await page.waitForTimeout(600);
    assert((await line()) !== x0, `the playhead line did not move (${x0})`);
    const a = await state(page);
    assert(a.playing, 'not playing');
    await page.click('[data-testid="qr-play"]');
    const b = await state(page);
    await page.waitForTimeout(200);
    const c = await state(page);
    assert(b.playheadUs > a.window.fromUs, `playhead ${b.playheadUs} did not move`);
    assert(!c.playing && c.playheadUs === b.playheadUs, 'pause did not stop the playhead');
  });

  await check('speed 20× plays faster than 0.25×', async () => {
    const run = async (speed) => {
      await set(page, { playheadUs: 0, speed, playing: false });
      const w = (await state(page)).window;
      await set(page, { playheadUs: w.fromUs, playing: true });
      await page.waitForTimeout(300);
      await set(page, { playing: false });
      return (await state(page)).playheadUs - w.fromUs;
    };
    const slow = await run(0.25);
    const fast = await run(20);
    assert(fast > slow * 20, `20×: ${fast} µs, 0.25×: ${slow} µs`);
    await set(page, { speed: 1 });
  });

  await check('keyboard steps to the next and previous event and selects it', async () => {
    await set(page, { playheadUs: (await state(page)).window.fromUs, selected: null });
    await page.focus('[data-testid="qr-replay"]');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    const a = await state(page);
    assert(a.selected !== null, 'step selected nothing');
    assert(
      a.playheadUs === a.selected.startUs || a.selected.startUs <= a.playheadUs,
      'playhead not at the selected event'
    );
    await page.keyboard.press('ArrowLeft');
    const b = await state(page);
    assert(b.playheadUs < a.playheadUs, `back: ${b.playheadUs} !< ${a.playheadUs}`);
  });

  await check('stepping through one lane lands only on that lane', async () => {
    await set(page, { stepLane: 'lock', playheadUs: (await state(page)).window.fromUs });
    for (let i = 0; i < 3; i++) {
      await page.click('[data-testid="qr-step-next"]');
    }
    const s = await state(page);
    assert(s.selected?.lane === 'lock', `selected ${JSON.stringify(s.selected)}`);
    await set(page, { stepLane: null });
  });

  await check('hovering an event shows its operator, match rule and confidence', async () => {
    await set(page, { window: (await state(page)).window });
    const read = await probe(page, { lane: 'read' });
    const box = await page.locator('[data-testid="qr-timeline-overlay"]').boundingBox();
    await page.mouse.move(box.x + read.firstX + 1, box.y + read.y);
    await page.waitForSelector('[data-testid="qr-tooltip"]', { timeout: 5000 });
    const text = await page.textContent('[data-testid="qr-tooltip"]');
    assert(/operator/.test(text) && /confidence/.test(text) && /match/.test(text), `tooltip: ${text}`);
  });

  await check('clicking an event selects it and its operator', async () => {
    const read = await probe(page, { lane: 'read' });
    const box = await page.locator('[data-testid="qr-timeline-overlay"]').boundingBox();
    await set(page, { selected: null, selectedNode: null });
    await page.mouse.click(box.x + read.firstX + 1, box.y + read.y);
    const s = await state(page);
    assert(s.selected?.lane === 'read', `selected ${JSON.stringify(s.selected)}`);
    assert(s.selectedNode === s.selected.nodeId, 'operator not selected with the event');
  });

  await check('wheel zooms in around the pointer; the axis re-labels', async () => {
    await page.dblclick('[data-testid="qr-timeline-overlay"]', { position: { x: 700, y: 10 } });
    const before = (await state(page)).window;
    const box = await page.locator('[data-testid="qr-timeline-overlay"]').boundingBox();
    await page.mouse.move(box.x + 600, box.y + 100);
    for (let i = 0; i < 5; i++) {
      await page.mouse.wheel(0, -200);
    }
    await frames(page);
    const after = (await state(page)).window;
    const span = (w) => w.toUs - w.fromUs;
    assert(span(after) < span(before) * 0.5, `span ${span(before)} → ${span(after)}`);
    await page.keyboard.press('-');
    assert(span((await state(page)).window) > span(after), 'minus did not zoom out');
  });

  await check('drag-select zooms to the selected range', async () => {
    await page.click('[data-testid="qr-reset"]');
    const s = await stats(page);
    const box = await page.locator('[data-testid="qr-timeline-overlay"]').boundingBox();
    const y = box.y + s.layout.lanes[0].y + 4;
    const x0 = box.x + s.layout.plotX + s.layout.plotW * 0.25;
    const x1 = box.x + s.layout.plotX + s.layout.plotW * 0.5;
    const full = (await state(page)).window;
    await page.mouse.move(x0, y);
    await page.mouse.down();
    await page.mouse.move(x1, y, { steps: 5 });
    await page.mouse.up();
    const w = (await state(page)).window;
    const want = (full.toUs - full.fromUs) / 4;
    assert(Math.abs(w.toUs - w.fromUs - want) < want * 0.05, `window ${JSON.stringify(w)} want span ${want}`);
    await page.click('[data-testid="qr-reset"]');
  });

  await check('+ and = zoom in around the playhead, - zooms back out', async () => {
    await page.click('[data-testid="qr-reset"]');
    const full = (await state(page)).window;
    const span = (w) => w.toUs - w.fromUs;
    const mid = full.fromUs + span(full) * 0.4;
    await set(page, { playheadUs: mid, playing: false });
    await page.focus('[data-testid="qr-replay"]');
    await page.keyboard.press('+');
    const a = (await state(page)).window;
    assert(Math.abs(span(a) - span(full) / 1.5) < span(full) * 0.01, `+: span ${span(full)} → ${span(a)}`);
    assert(a.fromUs < mid && a.toUs > mid, `+ lost the playhead: ${JSON.stringify(a)} at ${mid}`);
    await page.keyboard.press('=');
    const b = (await state(page)).window;
    assert(Math.abs(span(b) - span(a) / 1.5) < span(a) * 0.01, `=: span ${span(a)} → ${span(b)}`);
    await page.keyboard.press('-');
    const c = (await state(page)).window;
    assert(Math.abs(span(c) - span(a)) < span(a) * 0.01, `-: span ${span(b)} → ${span(c)}, want ${span(a)}`);
    await page.click('[data-testid="qr-reset"]');
  });

  await check('shift-wheel, shift-drag and dragging the axis pan the window, keeping its span', async () => {
    await page.click('[data-testid="qr-reset"]');
    const full = (await state(page)).window;
    const span = (w) => w.toUs - w.fromUs;
    await set(page, { playheadUs: full.fromUs + span(full) / 2, playing: false });
    await page.focus('[data-testid="qr-replay"]');
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('+');
    }
    await frames(page);
    const s = await stats(page);
    const L = s.layout;
    const box = await page.locator('[data-testid="qr-timeline-overlay"]').boundingBox();
    const x = box.x + L.plotX + L.plotW / 2;
    const laneY = box.y + L.lanes[0].y + L.lanes[0].h / 2;
    const w0 = (await state(page)).window;
    assert(span(w0) < span(full) / 4, `not zoomed in: ${span(w0)} of ${span(full)}`);
    const moved = (a, b, px, what) => {
      const want = (px / L.plotW) * span(a);
      assert(Math.abs(span(b) - span(a)) < span(a) * 1e-6, `${what} changed the span: ${span(a)} → ${span(b)}`);
      assert(
        Math.abs(b.fromUs - a.fromUs - want) < Math.abs(want) * 0.1 + 1,
        `${what}: moved ${b.fromUs - a.fromUs} µs, want ${want}`
      );
    };

    // shift + wheel down: later (by the wheel distance over the plot width)
    await page.mouse.move(x, laneY);
    await page.keyboard.down('Shift');
    await page.mouse.wheel(0, 120);
    await page.keyboard.up('Shift');
    await frames(page);
    const w1 = (await state(page)).window;
    moved(w0, w1, 120, 'shift-wheel');
    const draws = (await stats(page)).baseDraws;
    assert(draws > s.baseDraws, `the timeline was not redrawn after panning (${s.baseDraws} → ${draws} draws)`);

    // shift-drag on a lane to the left by 150 px: later by 150 px
    await page.keyboard.down('Shift');
    await page.mouse.down();
    await page.mouse.move(x - 150, laneY, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const w2 = (await state(page)).window;
    moved(w1, w2, 150, 'shift-drag');

    // dragging the axis (no shift) to the right by 100 px: earlier by 100 px
    const axisY = box.y + L.axisH / 2;
    await page.mouse.move(x, axisY);
    await page.mouse.down();
    await page.mouse.move(x + 100, axisY, { steps: 5 });
    await page.mouse.up();
    const w3 = (await state(page)).window;
    moved(w2, w3, -100, 'axis drag');
    await page.click('[data-testid="qr-reset"]');
  });

  await check('clicking an operator filters every lane to its events', async () => {
    const before = await stats(page);
    const ops = before.layout.plan.rows.map((r) => r.nodeId);
    // the operator with the fewest read marks but some: a leaf scan
    const node = await page.evaluate((ids) => {
      const t = window.__QUERYREPLAY_DEBUG__.panels[0];
      return ids.find((id) =>
        document.querySelector(`[data-testid="qr-plan-reads-${id}"]`)?.textContent?.match(/\/[1-9]/)
      );
    }, ops);
    assert(node !== undefined, 'no operator with reads');
    const all = await probe(page, { lane: 'read' });
    await page.click(`[data-testid="qr-plan-node-${node}"]`);
    await frames(page);
    const s = await state(page);
    assert(s.filterNode === node, `filter ${s.filterNode}`);
    const only = await probe(page, { lane: 'read' });
    assert(only.marks <= all.marks, `filtered lane draws more (${only.marks} > ${all.marks})`);
    assert((await page.textContent('[data-testid="qr-filter"]')).includes(String(node)), 'no filter chip');
    await page.keyboard.press('Escape');
    assert((await state(page)).filterNode === null, 'Escape did not clear the filter');
  });

  await check('the plan tree follows the playhead', async () => {
    const s = await state(page);
    const rootOp = await page.evaluate(() => {
      const op = window.__QUERYREPLAY_DEBUG__.panels[0].trace.operators[0];
      return { startUs: op.startUs, endUs: op.endUs };
    });
    await set(page, { playheadUs: (rootOp.startUs + rootOp.endUs) / 2 });
    await frames(page);
    const active = await page.$$eval('[data-status="active"]', (els) => els.length);
    assert(active > 0, 'no active operator half-way through');
    await set(page, { playheadUs: s.window.toUs });
    await frames(page);
    const done = await page.$$eval('[data-status="done"]', (els) => els.length);
    assert(done > 0, 'no finished operator at the end');
  });

  await check('the page map lights up pages as reads pass', async () => {
    await page.click('[data-testid="qr-reset"]');
    await page.click('[data-testid="qr-tab-pages"]');
    await set(page, { playheadUs: (await state(page)).window.toUs });
    await frames(page, 4);
    const text = await page.textContent('[data-testid="qr-pages-touched"]');
    const [touched, total] = text.match(/[\d,]+/g).map((v) => Number(v.replace(/,/g, '')));
    assert(total > 0 && touched === total, `at the end: ${text}`);
    const lit = await page.evaluate(() => {
      const c = document.querySelector('[data-testid="qr-page-map-canvas"]');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) {
        n += d[i + 3] > 0 ? 1 : 0;
      }
      return n;
    });
    assert(lit > 100, `page map drew ${lit} pixels`);
    await set(page, { playheadUs: (await state(page)).window.fromUs });
    await frames(page, 2);
    const start = await page.textContent('[data-testid="qr-pages-touched"]');
    assert(start.startsWith('0 '), `at the start: ${start}`);
  });

  await check('locks and the event view follow the selection', async () => {
    await page.click('[data-testid="qr-tab-locks"]');
    assert((await page.textContent('[data-testid="qr-locks-summary"]')).includes('acquired so far'), 'no lock summary');
    await set(page, { stepLane: 'lock' });
    await page.click('[data-testid="qr-step-next"]');
    await page.click('[data-testid="qr-tab-stack"]');
    const sel = await page.textContent('[data-testid="qr-selected"]');
    assert(/^Lock/.test(sel) && /confidence/.test(sel), `event view: ${sel}`);
    await set(page, { stepLane: null });
  });

  const shots = [];
  for (const theme of ['dark', 'light']) {
    for (const [size, w, h] of [
      ['large', 1400, 560],
      ['small', 454, 206],
    ]) {
      await check(`screenshot ${theme} ${size}`, async () => {
        await openHarness(page, server.url, {
          traceId,
          theme,
          width: w,
          height: h,
          title: 'Hash join — Customers ⋈ Orders',
        });
        const s = await state(page);
        await set(page, { playheadUs: s.window.fromUs + (s.window.toUs - s.window.fromUs) * 0.62 });
        if (size === 'large') {
          await page.click('[data-testid="qr-tab-plan"]');
        }
        await frames(page, 4);
        // the theme reaches the canvas: a lane background is dark in dark, light in light
        const bg = await page.evaluate(() => {
          const L = window.__QUERYREPLAY_DEBUG__.panels[0].stats.layout;
          const c = document.querySelector('[data-testid="qr-timeline-base"]');
          const dpr = c.width / L.width;
          const box = L.lanes.find((l) => l.name === 'write');
          const d = c
            .getContext('2d')
            .getImageData(Math.floor((L.plotX + 2) * dpr), Math.floor((box.y + 2) * dpr), 1, 1).data;
          return (d[0] + d[1] + d[2]) / 3;
        });
        assert(theme === 'dark' ? bg < 80 : bg > 180, `${theme} lane background brightness ${bg}`);
        const file = path.join(out, `replay-${theme}-${size}.png`);
        await page.locator('[data-testid="harness-panel"]').screenshot({ path: file });
        shots.push(file);
      });
    }
  }
  await check('screenshot pages view', async () => {
    await openHarness(page, server.url, {
      traceId,
      theme: 'dark',
      width: 1400,
      height: 560,
      title: 'Hash join — page map',
    });
    const s = await state(page);
    await set(page, { playheadUs: s.window.fromUs + (s.window.toUs - s.window.fromUs) * 0.62 });
    await page.click('[data-testid="qr-tab-pages"]');
    await frames(page, 4);
    await page.locator('[data-testid="harness-panel"]').screenshot({ path: path.join(out, 'replay-dark-pages.png') });
  });

  await check('a parallel plan gets one bar per worker thread', async () => {
    await openHarness(page, server.url, {
      query: JSON.stringify({ queryType: 'trace', sql: PARALLEL, options: { clearBufferPool: true } }),
      width: 1400,
      height: 560,
      title: 'Parallel aggregate (MAXDOP 4) — per-thread bars',
    });
    const s = await stats(page);
    const threaded = s.layout.plan.rows.filter((r) => r.threads.length > 1);
    assert(
      threaded.length > 0,
      `no operator with thread bars: ${JSON.stringify(s.layout.plan.rows.map((r) => [r.nodeId, r.threads.length]))}`
    );
    const st = await state(page);
    await set(page, { playheadUs: st.window.fromUs + (st.window.toUs - st.window.fromUs) * 0.6 });
    await frames(page, 4);
    await page
      .locator('[data-testid="harness-panel"]')
      .screenshot({ path: path.join(out, 'replay-dark-parallel.png') });
  });

  await check('zooming into binned lanes fetches detail with a view query', async () => {
    await openHarness(page, server.url, { traceId, width: 1000, height: 420, maxDataPoints: 30 });
    // with 30 rows per lane, the lanes with more events than that arrive binned
    const lanes = await page.evaluate(() =>
      Object.values(window.__QUERYREPLAY_DEBUG__.panels[0].trace.lanes)
        .filter((l) => l)
        .map((l) => ({ name: l.name, binned: l.binned, rows: l.n, events: l.total }))
    );
    const binned = lanes.filter((l) => l.binned).map((l) => l.name);
    assert(binned.length > 0, `no lane arrived binned with maxDataPoints 30: ${JSON.stringify(lanes)}`);
    const base = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get().window);
    await set(page, { window: { fromUs: base.fromUs, toUs: base.fromUs + (base.toUs - base.fromUs) / 8 } });
    await page.waitForFunction(() => window.__QUERYREPLAY_DEBUG__.panels[0].stats.detailFetches > 0, null, {
      timeout: 15_000,
    });
    const s1 = await stats(page);
    const detail = s1.detailWindows[0];
    assert(detail.fromUs <= base.fromUs + 1, `detail window ${JSON.stringify(detail)}`);
    // the detail is finer than the frames: some lane that was binned is raw rows in the zoomed window
    const finer = binned.filter((n) => !detail.binned.includes(n));
    assert(finer.length > 0, `detail for ${JSON.stringify(detail)} is as binned as the frames (${binned.join(', ')})`);
  });

  await check('colour by operator or by lane changes the colour the reads are drawn in', async () => {
    // the lane's colour is the bar beside its label; a mark drawn in it (or blended
    // with the background at its edges) lies on the segment between the two colours
    const colours = async (colorBy) => {
      await openHarness(page, server.url, {
        traceId,
        width: 1400,
        height: 560,
        options: JSON.stringify({ colorBy }),
        title: `colour by ${colorBy}`,
      });
      const label = await readLanePixel(page, 'label');
      const px = await laneColours(page, 'read');
      const bg = await readLanePixel(page, 'background');
      const off = (rgb) => {
        // distance from rgb to the segment bg → label
        const d = label.map((v, i) => v - bg[i]);
        const len2 = d.reduce((a, v) => a + v * v, 0) || 1;
        const t = Math.max(0, Math.min(1, rgb.reduce((a, v, i) => a + (v - bg[i]) * d[i], 0) / len2));
        return Math.hypot(...rgb.map((v, i) => v - (bg[i] + t * d[i])));
      };
      let total = 0;
      let otherHue = 0;
      for (const [key, n] of px) {
        total += n;
        if (off(key.split(',').map(Number)) > 40) {
          otherHue += n;
        }
      }
      return { label, bg, total, otherHue };
    };
    const nodes = await (async () => {
      await openHarness(page, server.url, { traceId, width: 1400, height: 560 });
      return page.evaluate(() => {
        const l = window.__QUERYREPLAY_DEBUG__.panels[0].trace.lanes.read;
        return [...new Set(Array.from(l.node.slice(0, l.n)))];
      });
    })();
    const byLane = await colours('lane');
    const byOperator = await colours('operator');
    assert(byLane.total > 0 && byOperator.total > 0, `no read marks: ${JSON.stringify({ byLane, byOperator })}`);
    assert(byLane.otherHue === 0, `colour by lane drew reads in another colour: ${JSON.stringify(byLane)}`);
    assert(
      byOperator.otherHue > byOperator.total * 0.1,
      `colour by operator drew the reads of operators ${nodes.join(', ')} in the lane colour: ${JSON.stringify(byOperator)}`
    );
  });

  await check('a page read shows its own resolved call stack with badges', async () => {
    // callStacks: the datasource resolves the frames through the loopback symbol server
    await openHarness(page, server.url, {
      query: JSON.stringify({
        queryType: 'trace',
        sql: SEEK,
        database: 'QueryReplayDemo',
        options: { clearBufferPool: true, disableReadAhead: true, callStacks: true },
      }),
      width: 1400,
      height: 560,
      title: 'Seek + key lookup — the call stack of a page read',
    });
    await set(page, { playheadUs: (await state(page)).window.fromUs, selected: null, stepLane: 'read' });
    await page.click('[data-testid="qr-step-next"]');
    await set(page, { stepLane: null });
    const s = await state(page);
    assert(s.selected?.lane === 'read', `selected ${JSON.stringify(s.selected)}`);
    await page.click('[data-testid="qr-tab-stack"]');
    await page.waitForSelector('[data-testid="qr-event-stack"]', { timeout: 5000 });
    const lines = await page.$$eval('[data-testid="qr-event-stack"] [data-testid="qr-stack-frame"]', (els) =>
      els.map((e) => e.textContent)
    );
    const has = (name, ...badges) => lines.some((l) => l.includes(name) && badges.every((b) => l.includes(b)));
    assert(has('sqlmin!BPool::ReadPage', 'Storage Engine', 'Buffer Pool'), `frames: ${lines.join(' | ')}`);
    assert(has('sqlmin!BTreeMgr::Seek', 'Index Access'), `frames: ${lines.join(' | ')}`);
    assert(has('sqlmin!CQScanRangeNew::GetRow', 'Query Operator'), `frames: ${lines.join(' | ')}`);
    const own = await page.textContent('[data-testid="qr-event-stack"]');
    assert(/infrastructure frame/.test(own), `the Extended Events frame is not collapsed: ${own}`);
    assert(!lines.some((l) => l.includes('XeSqlPkg')), 'the collapsed publish frame is listed');
    await page
      .locator('[data-testid="harness-panel"]')
      .screenshot({ path: path.join(out, 'replay-dark-callstack.png') });
  });

  await check('the Index view shows the B-tree levels root to leaf, lighting up as reads pass', async () => {
    await page.click('[data-testid="qr-tab-pages"]');
    await page.locator('[data-testid="qr-page-map"] input[id^="option-index"]').check();
    const canvas = '[data-testid="qr-page-map-canvas"]';
    await page.waitForSelector(`${canvas}[data-mode="index"]`, { timeout: 5000 });
    const groups = (await page.getAttribute(canvas, 'data-groups')).split('\n');
    const levels = groups.map((g) => Number((g.match(/level (\d+)/) ?? [])[1]));
    assert(
      groups.some((g) => /level 1 \(root\)/.test(g)) && groups.some((g) => /level 0 \(leaf\)/.test(g)),
      `groups: ${groups}`
    );
    // within each object, root first and leaves last
    assert(
      levels.every((l) => Number.isFinite(l)),
      `groups: ${groups}`
    );
    const lit = async () =>
      page.evaluate((sel) => {
        const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const colors = new Set();
        for (let i = 0; i < d.length; i += 4) {
          if (d[i + 3] > 0) {
            colors.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
          }
        }
        return colors.size;
      }, canvas);
    await set(page, { playheadUs: (await state(page)).window.fromUs });
    await frames(page, 3);
    const before = await lit();
    await set(page, { playheadUs: (await state(page)).window.toUs });
    await frames(page, 4);
    const text = await page.textContent('[data-testid="qr-pages-touched"]');
    const [touched, total] = text.match(/[\d,]+/g).map((v) => Number(v.replace(/,/g, '')));
    assert(total > 0 && touched === total, `at the end: ${text}`);
    assert((await lit()) > before, 'no page lit up in the Index view as the reads passed');
    await page.locator('[data-testid="harness-panel"]').screenshot({ path: path.join(out, 'replay-dark-index.png') });
  });

  await check('the lock list shows the rows the key locks resolved to', async () => {
    // the seek's trace: its key locks carry the row each %%lockres%% hash resolved to
    const lock = await page.evaluate(() => {
      const lane = window.__QUERYREPLAY_DEBUG__.panels[0].trace.lanes.lock;
      const f = (n) => lane.frame.fields.find((x) => x.name === n);
      for (let i = 0; i < lane.n; i++) {
        const r = lane.row[i];
        const row = f('row')?.values[r];
        if (row) {
          return { startUs: lane.start[i], row, object: f('object').values[r], type: f('resourceType').values[r] };
        }
      }
      return { locks: lane.n, binned: lane.binned, types: [...new Set(f('resourceType')?.values ?? [])] };
    });
    assert(lock.row, `no lock in the trace carries a resolved row: ${JSON.stringify(lock)}`);
    await set(page, { playheadUs: lock.startUs, filterNode: null, playing: false });
    await page.click('[data-testid="qr-tab-locks"]');
    await frames(page, 2);
    const rows = await page.$$eval('[data-testid="qr-locks"] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))
    );
    assert(
      rows.some((c) => c[1].startsWith(lock.type) && c[2] === lock.object && c[3] === lock.row),
      `locks held at ${lock.startUs} µs: ${JSON.stringify(rows)}; want ${lock.type} on ${lock.object} row ${lock.row}`
    );
  });

  await wholeScreen({ page, server, traceId, check, assert, out, shots });
  await viewerTool({ page, server, traceId, check, assert, out, shots });
  await queryInView({ page, server, traceId, check, assert, out, shots });
  await planDiagram({ page, server, traceId, check, assert, out, shots });
  await statementTree({ page, server, check, assert, out });
  await findingsAndCompare({ page, server, check, assert, out, shots });

  await check('no console errors', async () => {
    assert(errors.length === 0, `console errors:\n${errors.join('\n')}`);
  });
  console.log(`screenshots: ${shots.map((f) => path.relative(root, f)).join(', ')}`);
} finally {
  await close();
  await server.stop();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
