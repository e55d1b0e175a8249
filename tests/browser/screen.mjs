// The whole screen (issue 28): at 1280×720 and 1920×1080, in both themes,
// the viewer's panel fills the window and every operator row names its
// operator and table in full or abbreviated, never cut ("1 Clustered Ind…").
import path from 'node:path';
import { animationFrames as frames, openHarness } from './lib.mjs';

const SIZES = [
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
];

export async function wholeScreen({ page, server, traceId, check, assert, out, shots }) {
  for (const size of SIZES) {
    for (const theme of ['dark', 'light']) {
      await check(`${size.width}×${size.height} ${theme}: the panel fills the window, names are readable`, async () => {
        await page.setViewportSize(size);
        await openHarness(page, server.url, { traceId, theme, title: 'Hash join' });
        await frames(page, 3);
        const box = await page.locator('[data-testid="qr-replay"]').boundingBox();
        assert(box.width >= size.width - 48, `panel ${box.width} px wide in a ${size.width} px window`);
        assert(box.height >= size.height - 80, `panel ${box.height} px high in a ${size.height} px window`);
        assert(
          box.x + box.width <= size.width && box.y + box.height <= size.height,
          `panel overflows: ${JSON.stringify(box)}`
        );
        const labels = await page.evaluate(() => {
          const p = window.__QUERYREPLAY_DEBUG__.panels[0];
          return p.trace.operators.map((o) => ({ node: o.nodeId, object: o.object, label: p.stats.labels[o.nodeId] }));
        });
        for (const l of labels) {
          assert(l.label && !l.label.includes('…'), `operator ${l.node} drawn as ${JSON.stringify(l.label)}`);
        }
        const text = labels.map((l) => l.label).join(' | ');
        assert(/Customers/.test(text) && /Orders/.test(text), `Customers and Orders not told apart: ${text}`);
        // hovering a label shows the operator's full name and object
        const row = await page.evaluate(() => {
          const p = window.__QUERYREPLAY_DEBUG__.panels[0];
          const r = p.stats.layout.plan.rows.find((x) => p.trace.byNode.get(x.nodeId).object);
          return { y: r.y + r.h / 2, object: p.trace.byNode.get(r.nodeId).object };
        });
        const overlay = page.locator('[data-testid="qr-timeline-overlay"]');
        const ob = await overlay.boundingBox();
        await page.mouse.move(ob.x + 20, ob.y + row.y);
        await page.waitForSelector('[data-testid="qr-tooltip"]', { timeout: 3000 });
        const tip = await page.textContent('[data-testid="qr-tooltip"]');
        assert(tip.includes(row.object), `tooltip ${tip} lacks ${row.object}`);
        await page.mouse.move(0, 0);
        const file = path.join(out, `screen-${size.width}x${size.height}-${theme}.png`);
        await page.screenshot({ path: file });
        shots.push(file);
      });
    }
  }
  await page.setViewportSize({ width: 1500, height: 700 });
}
