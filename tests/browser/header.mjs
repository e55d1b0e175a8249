// The query in view (issue 28): at 1280×720 and 1920×1080 in both themes
// the header shows the statement and its numbers, the phases and the page
// map have legends, and Table I/O and Wait Stats list what the trace read
// and waited on. Numbers are checked against another path through the
// frames (the operators frame), not against themselves.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { animationFrames as frames, legendKeysCut, openHarness, runAlone } from './lib.mjs';

const SIZES = [
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
];

const num = (s) => Number(String(s).replace(/[^\d.]/g, ''));

export async function queryInView({ page, server, traceId, check, assert, out, shots }) {
  for (const size of SIZES) {
    for (const theme of ['dark', 'light']) {
      await check(`${size.width}×${size.height} ${theme}: header, legends, Table I/O and Wait Stats`, async () => {
        await page.setViewportSize(size);
        await openHarness(page, server.url, { traceId, theme, title: 'Hash join' });
        await frames(page, 3);
        const t = await page.evaluate(() => {
          const p = window.__QUERYREPLAY_DEBUG__.panels[0];
          const logical = p.trace.operators.reduce((a, o) => a + (o.logicalReads ?? 0), 0);
          return { statement: p.trace.statement, durationUs: p.trace.durationUs, logical };
        });
        const text = async (id) => (await page.textContent(`[data-testid="${id}"]`)) ?? '';
        const sql = await page.getAttribute('[data-testid="qr-header-sql"]', 'title');
        assert(sql === t.statement, `header statement ${JSON.stringify(sql)}, want ${JSON.stringify(t.statement)}`);
        const elapsed = await text('qr-fact-elapsed');
        assert(
          elapsed.includes(`${(t.durationUs / 1000).toFixed(1)} ms`),
          `header elapsed ${elapsed}, trace ${t.durationUs} µs`
        );
        const logical = num(await text('qr-fact-logical'));
        assert(logical === t.logical && logical > 0, `header logical reads ${logical}, operators sum ${t.logical}`);
        assert(/rows \d[\d,]* rows?/.test(await text('qr-fact-rows')), `rows: ${await text('qr-fact-rows')}`);
        assert(/physical reads \d/.test(await text('qr-fact-physical')), `physical: ${await text('qr-fact-physical')}`);
        assert(
          /read-ahead reads \d/.test(await text('qr-fact-readahead')),
          `read-ahead: ${await text('qr-fact-readahead')}`
        );
        assert(/^CPU /.test(await text('qr-fact-cpu')), `CPU: ${await text('qr-fact-cpu')}`);
        // the trace ran cold with read-ahead off
        const options = await text('qr-fact-options');
        assert(options.includes('cold cache, read-ahead off'), `options: ${options}`);
        // the header is on screen, as wide as the panel
        const hb = await page.locator('[data-testid="qr-header"]').boundingBox();
        assert(hb && hb.width >= size.width - 48 && hb.y >= 0, `header box ${JSON.stringify(hb)}`);
        // every fact is whole on screen or has its full text on hover
        const cut = await page.$$eval('[data-testid="qr-header"] [data-testid^="qr-fact-"]', (els) =>
          els.filter((e) => e.scrollWidth > e.clientWidth + 1 && !e.title).map((e) => e.dataset.testid)
        );
        assert(cut.length === 0, `facts cut without hover text: ${cut.join(', ')}`);

        // the phase legend says what the fills mean, in the terminal's words
        const legend = await text('qr-phase-legend');
        for (const w of ['consume', 'build', 'probe', 'emit', 're-executed', 'open, phase unknown']) {
          assert(legend.includes(w), `phase legend lacks ${w}: ${legend}`);
        }
        // and every key is whole inside it (at 1280×720 "open, phase unknown" was cut and "not executed" hidden)
        const outside = await legendKeysCut(page);
        assert(outside.length === 0, `legend keys cut or hidden: ${JSON.stringify(outside)}`);

        // Table I/O: Customers and Orders, their logical reads adding up to the header's
        await page.click('[data-testid="qr-tab-summary"]');
        await frames(page, 2);
        const io = await page.$$eval('[data-testid="qr-table-io-row"]', (trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))
        );
        const tables = io.map((r) => r[0]).join(' ');
        assert(/Customers/.test(tables) && /Orders/.test(tables), `Table I/O tables: ${tables}`);
        const ioLogical = io.reduce((a, r) => a + (r[1] === '—' ? 0 : num(r[1])), 0);
        assert(ioLogical <= logical && ioLogical > 0, `Table I/O logical reads ${ioLogical}, header ${logical}`);
        // Wait Stats: the types' µs add up to the header's time waited
        const waited = num(await text('qr-fact-waits')); // ms, 2 decimals
        const waitRows = await page.$$eval('[data-testid="qr-wait-type"]', (trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))
        );
        const waitUs = waitRows.reduce((a, r) => a + num(r[2]), 0);
        assert(Math.abs(waitUs / 1000 - waited) <= 0.006, `Wait Stats ${waitUs} µs, header waited ${waited} ms`);
        assert(waitRows.length > 0, 'a cold-cache trace waited on nothing?');
        const classes = await page.$$eval('[data-testid="qr-wait-class"] td:first-child', (tds) =>
          tds.map((td) => td.textContent)
        );
        assert(classes.length > 0, 'Wait Stats has no category rows');
        // a click on a wait type moves the playhead to its first wait and picks its waits out
        await page.click('[data-testid="qr-wait-type"] >> nth=0');
        const hl = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get().highlight);
        assert(hl && hl.source === `wait:${waitRows[0][0]}`, `wait click highlight ${JSON.stringify(hl?.source)}`);
        // a click on a table filters the lanes to its operator
        await page.click('[data-testid="qr-table-io-row"] >> nth=0');
        const filter = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get().filterNode);
        assert(filter !== null, 'a Table I/O click left the lanes unfiltered');
        await frames(page, 2);
        const file = path.join(out, `header-${size.width}x${size.height}-${theme}.png`);
        await page.screenshot({ path: file });
        shots.push(file);

        // the page map's legend names whose pages each colour is
        await page.evaluate(() =>
          window.__QUERYREPLAY_DEBUG__.panels[0].store.set({ filterNode: null, selectedNode: null, highlight: null })
        );
        await page.click('[data-testid="qr-tab-pages"]');
        await frames(page, 2);
        const keys = await page.$$eval('[data-testid="qr-page-legend"] > span', (s) => s.map((e) => e.textContent));
        assert(
          keys.some((k) => /read by .*Orders/.test(k)),
          `page legend: ${keys.join(' | ')}`
        );
        const pfile = path.join(out, `pages-${size.width}x${size.height}-${theme}.png`);
        await page.screenshot({ path: pfile });
        shots.push(pfile);
      });
    }
  }
  await page.setViewportSize({ width: 1500, height: 700 });
}

// alone: node tests/browser/header.mjs (after npm run build:harness and go build of bin/harness-server)
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runAlone(queryInView);
}
