// Browser cases for issue 19 in the panel, run by replay.test.mjs (make
// test-browser): a trace with findings through the real datasource on the
// stand-in — the findings list shows them, a click selects the operator,
// zooms to the evidence and steps through it — and compares of stand-in
// scenario pairs drawn as two timelines with the per-operator table.
// Screenshots, light and dark, go to tests/output/.
import path from 'node:path';
import { animationFrames as frames, openHarness } from './lib.mjs';

// internal/standin/scenarios.go: the sort that spills, the same sort with a grant that fits,
// a key lookup per row, and the same query forced to scan the clustered index
const SORT_SPILL =
  'SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l WHERE l.Quantity * l.Price > 20 ORDER BY l.Price DESC, l.OrderID';
const SORT_NO_SPILL = `${SORT_SPILL} OPTION (MIN_GRANT_PERCENT = 1)`;
const SEEK_KEY_LOOKUP = 'SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42';
const FORCED_SCAN =
  'SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WITH (INDEX(PK_Orders)) WHERE o.CustomerID = 42';

const COLD = { clearBufferPool: true, disableReadAhead: true };

// in-page helpers; `side` picks a compare timeline ('a' or 'b'), none the replay
const panel = (page, side) =>
  page.evaluate((s) => {
    const p = window.__QUERYREPLAY_DEBUG__.panels.find((x) => (s ? x.side === s : !x.side));
    const st = p.store.get();
    return {
      state: { ...st },
      layout: p.stats.layout,
      lanes: p.stats.lanes,
      baseDraws: p.stats.baseDraws,
      operators: p.trace.operators.map((o) => ({ nodeId: o.nodeId, name: o.physicalOp, startUs: o.startUs })),
      bounds: { fromUs: p.trace.startUs, toUs: p.trace.endUs },
    };
  }, side ?? null);

/**
 * Pixels of a canvas inside a box (CSS px of the panel's layout): `marks`
 * are those not of the box's most common colour (what the base layer drew
 * over its background), `opaque` those not transparent (what the overlay drew).
 */
async function drawn(page, { side, canvas, box }) {
  return page.evaluate(
    ({ s, which, b }) => {
      const root = s ? document.querySelector(`[data-testid="qr-compare-side-${s}"]`) : document;
      const c = root.querySelector(`[data-testid="qr-timeline-${which}"]`);
      const L = window.__QUERYREPLAY_DEBUG__.panels.find((x) => (s ? x.side === s : !x.side)).stats.layout;
      const dpr = c.width / L.width;
      const x0 = Math.floor(b.x * dpr);
      const y0 = Math.floor(b.y * dpr);
      const w = Math.max(1, Math.floor(b.w * dpr));
      const h = Math.max(1, Math.floor(b.h * dpr));
      const d = c.getContext('2d').getImageData(x0, y0, w, h).data;
      const counts = new Map();
      for (let i = 0; i < d.length; i += 4) {
        const k = `${d[i]},${d[i + 1]},${d[i + 2]},${d[i + 3]}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      const bg = [...counts.entries()].sort((p, q) => q[1] - p[1])[0][0];
      let marks = 0;
      let opaque = 0;
      for (const [k, n] of counts) {
        marks += k !== bg ? n : 0;
        opaque += k.endsWith(',0') ? 0 : n;
      }
      return { marks, opaque, pixels: d.length / 4 };
    },
    { s: side ?? null, which: canvas, b: box }
  );
}

const laneBox = (layout, name, { top } = {}) => {
  const l = layout.lanes.find((x) => x.name === name);
  return { x: layout.plotX, y: l.y, w: layout.plotW, h: top ? 3 : l.h };
};

async function shot(page, file) {
  // no tooltip of the last button clicked in the picture
  await page.mouse.move(1, 1);
  await frames(page, 4);
  await page.locator('[data-testid="harness-panel"]').screenshot({ path: file });
  return file;
}

/** Traces one statement through the real datasource and returns its trace id. */
async function trace(page, url, sql, options, title, size = { width: 1400, height: 560 }, theme = 'dark') {
  await openHarness(page, url, {
    query: JSON.stringify({ queryType: 'trace', sql, database: 'QueryReplayDemo', options }),
    ...size,
    theme,
    title,
  });
  return page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
}

export async function findingsAndCompare({ page, server, check, assert, out, shots }) {
  const ids = {};

  await check(
    'findings: a traced sort that spills lists the spill above the timeline and in the Findings tab',
    async () => {
      ids.spill = await trace(page, server.url, SORT_SPILL, COLD, 'Sort spill — findings');
      assert(/^[0-9a-f]{32}$/.test(ids.spill ?? ''), `trace id ${ids.spill}`);
      const strip = await page.textContent('[data-testid="qr-findings-strip"]');
      assert(/Sort spilled to tempdb/.test(strip), `strip: ${strip}`);
      await page.click('[data-testid="qr-tab-findings"]');
      const rules = await page.$$eval('[data-testid^="qr-finding-"][data-rule]', (els) =>
        els.map((e) => e.getAttribute('data-rule'))
      );
      for (const r of ['spill', 'grant-too-small', 'cold-cache']) {
        assert(rules.includes(r), `rules listed: ${rules.join(', ')}`);
      }
    }
  );

  await check('findings: clicking the spill selects the Sort, zooms to its evidence and highlights it', async () => {
    const before = await panel(page);
    const i = await page.$eval('[data-rule="spill"]', (e) => e.getAttribute('data-testid').replace('qr-finding-', ''));
    await page.click(`[data-testid="qr-finding-title-${i}"]`);
    await frames(page, 4);
    const p = await panel(page);
    const sort = p.operators.find((o) => o.name === 'Sort');
    assert(p.state.selectedNode === sort.nodeId, `selected ${p.state.selectedNode}, Sort is ${sort.nodeId}`);
    const ev = p.state.highlight.events[0];
    assert(ev && ev.lane === 'memory', `evidence ${JSON.stringify(p.state.highlight.events)}`);
    const w = p.state.window;
    assert(w.fromUs <= ev.startUs && ev.startUs <= w.toUs, `window ${JSON.stringify(w)} misses ${ev.startUs}`);
    const span = (x) => x.toUs - x.fromUs;
    assert(span(w) < span(before.state.window) * 0.2, `zoomed ${span(before.state.window)} → ${span(w)} µs`);
    assert(p.state.selected?.lane === 'memory' && p.state.selected.startUs === ev.startUs, 'evidence not selected');
    assert(p.state.playheadUs === ev.startUs, `playhead ${p.state.playheadUs}`);
    // the evidence mark along the top of the memory lane, in the overlay
    const mark = await drawn(page, { canvas: 'overlay', box: laneBox(p.layout, 'memory', { top: true }) });
    assert(mark.opaque > 0, 'no evidence mark drawn on the memory lane');
    await page.click('[data-testid="qr-tab-stack"]');
    const sel = await page.textContent('[data-testid="qr-selected"]');
    assert(/sort_warning/.test(sel), `event view: ${sel}`);
    await page.click('[data-testid="qr-tab-findings"]');
    shots.push(await shot(page, path.join(out, 'findings-dark-large.png')));
  });

  await check('findings: next and previous step through the evidence of the cold cache', async () => {
    const i = await page.$eval('[data-rule="cold-cache"]', (e) =>
      e.getAttribute('data-testid').replace('qr-finding-', '')
    );
    await page.click(`[data-testid="qr-finding-title-${i}"]`);
    const a = await panel(page);
    assert(a.state.highlight.events.length > 10, `${a.state.highlight.events.length} evidence events`);
    assert(a.state.highlight.current === 0, 'not on the first evidence event');
    await page.click('[data-testid="qr-evidence-next"]');
    await page.click('[data-testid="qr-evidence-next"]');
    const b = await panel(page);
    const ev = b.state.highlight.events[2];
    assert(b.state.highlight.current === 2 && b.state.playheadUs === ev.startUs, `at ${b.state.playheadUs}`);
    assert(b.state.selected?.lane === ev.lane && b.state.selected.startUs === ev.startUs, 'step did not select it');
    assert((await page.textContent('[data-testid="qr-evidence-pos"]')).startsWith('evidence 3 of'), 'position');
    await page.focus('[data-testid="qr-replay"]');
    await page.keyboard.press('[');
    assert((await panel(page)).state.highlight.current === 1, '[ did not step back');
    await page.keyboard.press('Escape');
    assert((await panel(page)).state.highlight === null, 'Escape kept the highlight');
  });

  for (const theme of ['light', 'dark']) {
    for (const [size, width, height] of [
      ['large', 1400, 560],
      ['small', 454, 206],
    ]) {
      if (theme === 'dark' && size === 'large') {
        continue;
      }
      await check(`findings: screenshot ${theme} ${size}`, async () => {
        await openHarness(page, server.url, {
          traceId: ids.spill,
          theme,
          width,
          height,
          title: 'Sort spill — findings',
        });
        await page.click('[data-testid="qr-strip-finding"]');
        if (size === 'large') {
          await page.click('[data-testid="qr-tab-findings"]');
        }
        const p = await panel(page);
        assert(p.state.highlight?.source === 'finding:0', `highlight ${JSON.stringify(p.state.highlight)}`);
        shots.push(await shot(page, path.join(out, `findings-${theme}-${size}.png`)));
      });
    }
  }

  await check('compare: seek with key lookups against the forced scan, operator by operator', async () => {
    // each statement is traced once before the compared run, so neither side carries its compilation
    await trace(page, server.url, FORCED_SCAN, { clearBufferPool: true }, 'forced scan, compiling');
    ids.scan = await trace(page, server.url, FORCED_SCAN, { clearBufferPool: true }, 'forced scan');
    await trace(page, server.url, SEEK_KEY_LOOKUP, { clearBufferPool: true }, 'seek + key lookup, compiling');
    ids.seek = await trace(page, server.url, SEEK_KEY_LOOKUP, { clearBufferPool: true }, 'seek + key lookup');
    await openCompare(page, server.url, [ids.scan, ids.seek], 'dark', 'Forced scan (A) vs index seek + key lookup (B)');
    const verdict = await page.textContent('[data-testid="qr-compare-verdict"]');
    assert(/reads 61 → 28/.test(verdict) && /1 replaced, 2 added/.test(verdict), `verdict: ${verdict}`);
    const replaced = page.locator('[data-testid^="qr-compare-row-"][data-status="replaced"]');
    const text = await replaced.textContent();
    assert(/Index Seek replaced Clustered Index Scan/.test(text), `replaced row: ${text}`);
    assert((await page.locator('[data-status="added"]').count()) === 2, 'added operators not listed');
    for (const side of ['a', 'b']) {
      const p = await panel(page, side);
      assert(p.baseDraws > 0 && p.lanes.plan.drawn > 0, `side ${side}: ${JSON.stringify(p.lanes.plan)}`);
      const reads = await drawn(page, { side, canvas: 'base', box: laneBox(p.layout, 'read') });
      assert(reads.marks > 0, `side ${side} draws no reads`);
    }
    const [a, b] = [await panel(page, 'a'), await panel(page, 'b')];
    assert(JSON.stringify(a.state.window) === JSON.stringify(b.state.window), 'the timelines are not on one axis');
    // both start at the batch start: the first operator of each begins near 0 on the shared axis
    assert(a.bounds.fromUs === 0 && b.bounds.fromUs === 0, `starts ${a.bounds.fromUs}, ${b.bounds.fromUs}`);
  });

  await check('compare: clicking the replaced row highlights the scan in A and the seek in B', async () => {
    await page.click('[data-testid^="qr-compare-row-"][data-status="replaced"]');
    await frames(page, 4);
    const [a, b] = [await panel(page, 'a'), await panel(page, 'b')];
    const scan = a.operators.find((o) => o.name === 'Clustered Index Scan');
    const seek = b.operators.find((o) => o.name === 'Index Seek');
    assert(a.state.selectedNode === scan.nodeId, `A selected ${a.state.selectedNode}`);
    assert(b.state.selectedNode === seek.nodeId, `B selected ${b.state.selectedNode}`);
    for (const [side, p, node] of [
      ['a', a, scan.nodeId],
      ['b', b, seek.nodeId],
    ]) {
      const row = p.layout.plan.rows.find((r) => r.nodeId === node);
      const gutter = await drawn(page, { side, canvas: 'overlay', box: { x: 0, y: row.y, w: 3, h: row.h } });
      assert(gutter.opaque === gutter.pixels, `side ${side}: the operator's row is not highlighted`);
    }
    // zooming one zooms both
    await page.focus('[data-testid="qr-compare"]');
    await page.keyboard.press('+');
    const [a2, b2] = [await panel(page, 'a'), await panel(page, 'b')];
    assert(a2.state.window.toUs - a2.state.window.fromUs < a.state.window.toUs - a.state.window.fromUs, 'no zoom');
    assert(JSON.stringify(a2.state.window) === JSON.stringify(b2.state.window), 'zoomed apart');
    await page.click('[data-testid="qr-reset"]');
    shots.push(await shot(page, path.join(out, 'compare-dark-large.png')));
  });

  await check('compare: the sort that spills against the one whose grant fits', async () => {
    const spill = await trace(page, server.url, SORT_SPILL, COLD, 'sort spill, compiled');
    await trace(page, server.url, SORT_NO_SPILL, COLD, 'sort, grant fits, compiling');
    ids.noSpill = await trace(page, server.url, SORT_NO_SPILL, COLD, 'sort, grant fits');
    await openCompare(page, server.url, [spill, ids.noSpill], 'light', 'Sort spill (A) vs MIN_GRANT_PERCENT = 1 (B)');
    const verdict = await page.textContent('[data-testid="qr-compare-verdict"]');
    assert(/spills 1 → 0/.test(verdict), `verdict: ${verdict}`);
    const rows = await page.$$eval('[data-testid^="qr-compare-row-"]', (els) => els.map((e) => e.textContent));
    assert(
      rows.some((r) => /Sort: spills 1 → 0/.test(r)),
      `rows: ${rows.join(' | ')}`
    );
    await page.click('[data-testid^="qr-compare-row-"]');
    shots.push(await shot(page, path.join(out, 'compare-light-large.png')));
  });

  await check('compare: screenshot small', async () => {
    await openCompare(page, server.url, [ids.scan, ids.seek], 'dark', 'Scan vs seek', { width: 454, height: 206 });
    shots.push(await shot(page, path.join(out, 'compare-dark-small.png')));
    await page.selectOption('[data-testid="qr-view"]', 'operators');
    assert(await page.isVisible('[data-testid="qr-compare-table"]'), 'no table view');
    shots.push(await shot(page, path.join(out, 'compare-dark-small-operators.png')));
  });
}

async function openCompare(page, url, traceIds, theme, title, size = { width: 1400, height: 620 }) {
  await openHarness(page, url, {
    query: JSON.stringify({ queryType: 'compare', traceIds }),
    theme,
    title,
    ...size,
  });
  await page.waitForSelector('[data-testid="qr-compare"]', { timeout: 10_000 });
}
