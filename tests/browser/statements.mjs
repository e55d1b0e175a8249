// The statement tree in the panel (issue 30), run by replay.test.mjs or on
// its own: npm run build:harness && node tests/browser/statements.mjs
// The procedure_nested scenario's batch (EXEC dbo.RegionReport, which EXECs
// dbo.CustomerOrders) is traced on the stand-in through the real datasource;
// the Statements tab shows batch → statements → the nested procedure's
// statements, the timeline has a span per statement, and picking the
// second planned statement replays that statement's own operators.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { animationFrames as frames, launchBrowser, openHarness, root, startServer, watchConsole } from './lib.mjs';

const PROCEDURE = "EXEC dbo.RegionReport @region = N'West'";

const rows = (page) =>
  page.$$eval('[data-testid="qr-statements"] tbody tr', (trs) =>
    trs.map((tr) => ({
      id: Number(tr.dataset.testid.replace('qr-statement-', '')),
      depth: Number(tr.dataset.depth),
      label: tr.querySelector('td').textContent,
      text: tr.title,
      current: tr.dataset.current === 'true',
      hasPlan: tr.dataset.hasPlan === 'true',
      cells: Array.from(tr.querySelectorAll('td')).map((td) => td.textContent),
    }))
  );
const operators = (page) =>
  page.evaluate(() =>
    window.__QUERYREPLAY_DEBUG__.panels[0].trace.operators.map((o) => ({ name: o.name, object: o.object ?? '' }))
  );
// "[QueryReplayDemo].[dbo].[Orders].[PK]" or "dbo.Orders.PK" → "Orders"
const tableOf = (object) => object.replace(/[[\]]/g, '').split('.').filter(Boolean).slice(-2, -1)[0] ?? '';

export async function statementTree({ page, server, check, assert, out }) {
  await openHarness(page, server.url, {
    query: JSON.stringify({ queryType: 'trace', sql: PROCEDURE, database: 'QueryReplayDemo' }),
    options: JSON.stringify({ linkedView: 'statements' }),
    width: 1450,
    height: 700,
    title: 'Procedure — statement tree',
  });
  await page.waitForSelector('[data-testid="qr-statements"]', { timeout: 10_000 });
  await frames(page, 2);
  let tree = [];

  await check('the tree is batch → statements → the nested procedure statements, with their figures', async () => {
    tree = await rows(page);
    assert(tree.length >= 4, `tree rows ${JSON.stringify(tree.map((r) => r.label))}`);
    assert(tree[0].label === 'Batch' && tree[0].depth === 0, `first row ${JSON.stringify(tree[0])}`);
    const outer = tree.filter((r) => /^(dbo\.)?RegionReport: /.test(r.label));
    const inner = tree.filter((r) => /^(dbo\.)?CustomerOrders: /.test(r.label));
    assert(outer.length >= 2, `RegionReport's statements: ${JSON.stringify(outer)}`);
    assert(inner.length >= 1, `CustomerOrders's statements: ${JSON.stringify(inner)}`);
    const exec = outer.find((r) => /EXEC\s+dbo\.CustomerOrders/i.test(r.text));
    assert(exec, `no EXEC dbo.CustomerOrders row among ${JSON.stringify(outer.map((r) => r.text))}`);
    for (const r of inner) {
      assert(r.depth === exec.depth + 1, `nested statement ${r.label} at depth ${r.depth}, its EXEC at ${exec.depth}`);
    }
    for (const r of tree) {
      assert(/ms$/.test(r.cells[1]) && /ms$/.test(r.cells[4]), `row ${r.label} lacks elapsed or waits: ${r.cells}`);
    }
    assert(tree.filter((r) => r.hasPlan).length >= 2, `planned statements: ${JSON.stringify(tree)}`);
    assert(tree.filter((r) => r.current).length === 1, 'exactly one statement is the drawn one');
  });

  await check('the timeline has a span per statement', async () => {
    const bands = await page.$$eval('[data-testid="qr-statement-bands"] > div', (ds) =>
      ds.map((d) => d.dataset.testid)
    );
    const ids = bands.map((b) => Number(b.replace('qr-statement-band-', '')));
    const statements = tree.filter((r) => r.id !== 0).map((r) => r.id);
    assert(
      ids.length >= statements.length - 1 && ids.every((id) => statements.includes(id)),
      `bands ${ids} for statements ${statements}`
    );
    const drawn = tree.find((r) => r.current);
    assert(ids.includes(drawn.id), `no band for the drawn statement ${drawn.id}: ${ids}`);
  });

  await check('picking the second planned statement replays its own operators', async () => {
    const planned = tree.filter((r) => r.hasPlan);
    const second = planned[1];
    const before = await operators(page);
    await page.click(`[data-testid="qr-statement-${second.id}"]`);
    await page.waitForSelector(`[data-testid="qr-statement-${second.id}"][data-current="true"]`, { timeout: 15_000 });
    await page.waitForFunction(() => (window.__QUERYREPLAY_DEBUG__.panels[0]?.stats.baseDraws ?? 0) > 0, null, {
      timeout: 15_000,
    });
    const after = await operators(page);
    assert(after.length > 0, 'the picked statement has no operators');
    assert(JSON.stringify(after) !== JSON.stringify(before), `the operators did not change: ${JSON.stringify(after)}`);
    // its own: every table its operators touch is named in its text
    for (const o of after.filter((x) => x.object)) {
      const t = tableOf(o.object);
      assert(
        second.text.toLowerCase().includes(t.toLowerCase()),
        `operator ${o.name} on ${o.object} is not of ${JSON.stringify(second.text)}`
      );
    }
    // the tree marks the picked statement as the one drawn
    const now = await rows(page);
    assert(
      now
        .filter((r) => r.current)
        .map((r) => r.id)
        .join() === String(second.id),
      `drawn statement ${JSON.stringify(now.filter((r) => r.current))}, picked ${second.id}`
    );
    await page.screenshot({ path: path.join(out, 'statements-picked.png') });
  });

  // the table fits its tab: no horizontal scroll, no figure cut; a cut statement text or a dropped column keeps its
  // full text on hover (the row's title)
  for (const size of [
    {
      tag: 'panel 525 px wide',
      shot: 'statements-panel-525.png',
      viewport: { width: 1280, height: 720 },
      panel: { width: 525, height: 560 },
    },
    {
      tag: 'viewer at 1280×720',
      shot: 'statements-1280x720-dark.png',
      viewport: { width: 1280, height: 720 },
      panel: {},
    },
    {
      tag: 'viewer at 1920×1080',
      shot: 'statements-1920x1080-dark.png',
      viewport: { width: 1920, height: 1080 },
      panel: {},
    },
    {
      tag: 'viewer at 1920×1080 light',
      shot: 'statements-1920x1080-light.png',
      viewport: { width: 1920, height: 1080 },
      panel: { theme: 'light' },
    },
  ]) {
    await check(`the statements table fits its tab (${size.tag})`, async () => {
      await page.setViewportSize(size.viewport);
      await openHarness(page, server.url, {
        query: JSON.stringify({ queryType: 'trace', sql: PROCEDURE, database: 'QueryReplayDemo' }),
        options: JSON.stringify({ linkedView: 'statements' }),
        ...size.panel,
        title: 'Procedure — statement tree',
      });
      await page.waitForSelector('[data-testid="qr-statements"] tbody tr', { timeout: 15_000 });
      await frames(page, 2);
      await page.screenshot({
        path: path.join(out, size.shot),
      });
      const fit = await page.$eval('[data-testid="qr-statements"]', (el) => {
        const cut = [];
        for (const td of el.querySelectorAll('th, td')) {
          const shown = getComputedStyle(td).display !== 'none';
          if (shown && td.scrollWidth > td.clientWidth + 1 && !(td.title || td.closest('tr').title)) {
            cut.push(td.textContent);
          }
        }
        const figures = [...el.querySelectorAll('tbody td:not(:first-child)')].filter(
          (td) => getComputedStyle(td).display !== 'none' && td.scrollWidth > td.clientWidth + 1
        );
        const hidden = [...el.querySelectorAll('thead th')]
          .filter((th) => getComputedStyle(th).display === 'none')
          .map((th) => th.textContent);
        const titles = [...el.querySelectorAll('tbody tr')].map((tr) => tr.title);
        return {
          scroll: el.scrollWidth,
          client: el.clientWidth,
          cut,
          figures: figures.map((td) => td.textContent),
          hidden,
          titles,
        };
      });
      assert(fit.scroll <= fit.client + 1, `the table is ${fit.scroll} px wide in a ${fit.client} px tab`);
      assert(fit.cut.length === 0, `cut without full text on hover: ${JSON.stringify(fit.cut)}`);
      assert(fit.figures.length === 0, `figures cut: ${JSON.stringify(fit.figures)}`);
      for (const h of fit.hidden) {
        // a dropped column's figure is in every statement row's title
        assert(
          fit.titles.slice(1).every((t) => t.toLowerCase().includes(h.toLowerCase())),
          `column ${h} dropped and not in the rows' titles: ${JSON.stringify(fit.titles)}`
        );
      }
    });
  }
}

// on its own: a server, a browser and the checks above
if (process.argv[1] === fileURLToPath(import.meta.url)) {
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
  function assert(cond, msg) {
    if (typeof msg !== 'string' || msg.trim() === '') {
      throw new Error('assert called without a message');
    }
    if (!cond) {
      throw new Error(msg);
    }
  }
  const server = await startServer();
  const { context, close } = await launchBrowser({ width: 1500, height: 760 });
  const errors = [];
  const out = path.join(root, 'tests', 'output');
  fs.mkdirSync(out, { recursive: true });
  try {
    const page = await context.newPage();
    watchConsole(page, errors);
    await statementTree({ page, server, check, assert, out });
    await check('no page or console errors', async () => {
      assert(errors.length === 0, `errors: ${errors.join('; ')}`);
    });
  } finally {
    await close();
    await server.stop();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
