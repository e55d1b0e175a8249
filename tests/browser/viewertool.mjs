// The viewer as a tool on its own (issue 28): at 1280×720 and 1920×1080 the
// page's own tools run a query with its options on the stand-in (and a
// reload does not run it again), open a stored trace from the list,
// compare two picked from the list, and open a bundle file from disk.
// Part of replay.test.mjs; `node tests/browser/viewertool.mjs` runs it alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { animationFrames as frames, launchBrowser, openHarness, root, startServer, watchConsole } from './lib.mjs';

const SIZES = [
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
];
const SEEK = 'SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42';

/** Waits until the page shows a query matching want (a predicate on __harness.query) and is ready. */
async function shown(page, want, what) {
  await page.waitForFunction(
    (src) => {
      const h = window.__harness;
      return h && h.state !== 'loading' && h.query && new Function('q', `return ${src}`)(h.query);
    },
    want,
    { timeout: 120_000 }
  );
  const st = await page.evaluate(() => ({ state: window.__harness.state, error: window.__harness.error }));
  if (st.state !== 'ready') {
    throw new Error(`${what}: ${st.error}`);
  }
  await frames(page, 3);
}

/**
 * Text in the viewer's tools that reads badly: every visible element with its own text whose colour has
 * a WCAG contrast ratio under 4.5 against the first opaque background behind it (placeholder and
 * disabled text excepted, as WCAG does). Returns "text: ratio (colour on background)" lines.
 */
export function illegibleText(page, selector) {
  return page.evaluate((sel) => {
    const rgba = (c) => {
      const m = /rgba?\(([^)]+)\)/.exec(c);
      if (!m) {
        return null;
      }
      const [r, g, b, a = 1] = m[1].split(',').map((x) => parseFloat(x));
      return { r, g, b, a };
    };
    const lum = ({ r, g, b }) => {
      const f = (v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const behind = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgba(getComputedStyle(e).backgroundColor);
        if (c && c.a > 0.5) {
          return c;
        }
      }
      return rgba(getComputedStyle(document.body).backgroundColor) ?? { r: 255, g: 255, b: 255, a: 1 };
    };
    const bad = [];
    for (const root of document.querySelectorAll(sel)) {
      for (const el of root.querySelectorAll('*')) {
        const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
        const st = getComputedStyle(el);
        const r = el.getBoundingClientRect();
        if (!own || st.visibility === 'hidden' || r.width === 0 || el.closest('[disabled],[aria-disabled="true"]')) {
          continue;
        }
        const fg = rgba(st.color);
        const bg = behind(el);
        if (!fg) {
          continue;
        }
        // the text's colour over its background, with the text's own alpha
        const mix = {
          r: fg.r * fg.a + bg.r * (1 - fg.a),
          g: fg.g * fg.a + bg.g * (1 - fg.a),
          b: fg.b * fg.a + bg.b * (1 - fg.a),
        };
        const [hi, lo] = [lum(mix), lum(bg)].sort((a, b) => b - a);
        const ratio = (hi + 0.05) / (lo + 0.05);
        if (ratio < 4.5) {
          bad.push(
            `${el.textContent.trim().slice(0, 40)}: ${ratio.toFixed(2)} (${st.color} on rgb(${bg.r},${bg.g},${bg.b}))`
          );
        }
      }
    }
    return bad;
  }, selector);
}

/** The stored traces, as the page's list reads them (with the page's token). */
function storedTraces(page) {
  return page.evaluate(async () => {
    const cfg = window.__QUERYREPLAY_VIEWER__;
    const r = await fetch(`/api/datasources/uid/${cfg.datasource.uid}/resources/traces`);
    return (await r.json()).map((t) => t.traceId);
  });
}

const THEMES = ['dark', 'light'];

/** The open drawer (and the popups it opened) is legible in the theme: asserts and says what is not. */
async function legible(page, assert, what) {
  // not a hovered or still-changing button: the colours it settles on
  await page.mouse.move(1, 1);
  await frames(page, 2);
  await page.waitForFunction(() => document.getAnimations().length === 0, null, { timeout: 10_000 });
  const bad = await illegibleText(page, '[data-testid="viewer-tool"]');
  assert(bad.length === 0, `${what}: text under 4.5:1 contrast: ${bad.join('; ')}`);
}

export async function viewerTool({ page, server, traceId, check, assert, out, shots, themes = THEMES }) {
  for (const theme of themes) {
    await viewerToolIn({ page, server, traceId, check, assert, out, shots, theme });
  }
}

async function viewerToolIn({ page, server, traceId, check, assert, out, shots, theme }) {
  for (const size of SIZES) {
    const tag = `${size.width}x${size.height}-${theme}`;
    await check(`${tag}: the viewer runs a query with its options, once`, async () => {
      await page.setViewportSize(size);
      await openHarness(page, server.url, { traceId, title: 'Hash join', theme });
      const before = await storedTraces(page);
      await page.click('[data-testid="viewer-tab-run"]');
      await page.waitForSelector('[data-testid="viewer-drawer-run"]');
      await page.fill('[data-testid="viewer-sql"]', SEEK);
      await page.click('label[for="qr-callstacks"]');
      // the harness allows clearing the buffer pool (allowBufferPoolClear), so cold cache is offered
      await page.click('label[for="qr-clear"]');
      await page.getByLabel('Log records').uncheck({ force: true });
      await legible(page, assert, 'the run form');
      // every option's label on one line, inside its box
      const wrapped = await page.$$eval('[data-testid="viewer-drawer-run"] label', (ls) =>
        ls
          .filter((l) =>
            [...l.querySelectorAll('*'), l].some((e) =>
              [...e.childNodes].some((n) => {
                if (n.nodeType !== 3 || n.textContent.trim() === '') {
                  return false;
                }
                const r = document.createRange();
                r.selectNodeContents(n);
                return new Set([...r.getClientRects()].map((c) => Math.round(c.top))).size > 1;
              })
            )
          )
          .map((l) => l.textContent)
      );
      assert(wrapped.length === 0, `labels wrapped: ${JSON.stringify(wrapped)}`);
      const shot = path.join(out, `viewer-run-${tag}.png`);
      await page.screenshot({ path: shot });
      shots.push(shot);
      await page.click('[data-testid="viewer-run"]');
      await shown(page, `q.queryType === 'trace' && !!q.run`, 'run');
      const q = await page.evaluate(() => window.__harness.query);
      assert(q.sql === SEEK, `ran ${q.sql}`);
      assert(
        q.options?.callStacks === true && q.options?.clearBufferPool === true,
        `options ${JSON.stringify(q.options)}`
      );
      assert(!(q.options?.events ?? []).includes('log'), `log records still traced: ${JSON.stringify(q.options)}`);
      const after = await storedTraces(page);
      assert(after.length === before.length + 1, `stored traces ${before.length} → ${after.length}`);
      const rendered = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels.at(-1).trace.operators.length);
      assert(rendered > 0, 'the run drew no operators');
      const url = new URL(page.url());
      assert(JSON.parse(url.searchParams.get('query')).run === q.run, `the URL does not carry the run: ${url}`);
      // a reload re-sends the same run request: the stored trace, no new run
      await page.reload();
      await shown(page, `q.queryType === 'trace' && q.run === ${JSON.stringify(q.run)}`, 'reload');
      const again = await storedTraces(page);
      assert(again.length === after.length, `the reload ran the batch again: ${after.length} → ${again.length}`);
      const file = path.join(out, `viewer-ran-${tag}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
    });

    await check(`${tag}: the viewer lists the stored traces and opens one`, async () => {
      await page.click('[data-testid="viewer-tab-traces"]');
      await page.waitForSelector('[data-testid="qr-saved-traces"] tbody tr');
      const rows = await page.$$eval('[data-testid="qr-saved-traces"] tbody tr', (trs) => trs.length);
      assert(rows >= 2, `${rows} stored traces listed`);
      await legible(page, assert, 'the stored traces');
      const file = path.join(out, `viewer-traces-${tag}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
      await page.click(`[aria-label="Open trace ${traceId}"]`);
      await shown(page, `q.queryType === 'bundle' && q.traceId === ${JSON.stringify(traceId)}`, 'open');
      const shownId = await page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
      assert(shownId === traceId, `opened ${shownId}, want ${traceId}`);
      assert(!(await page.isVisible('[data-testid="viewer-drawer-traces"]')), 'the list stays open over the replay');
    });

    await check(`${tag}: the viewer compares two traces picked from the list`, async () => {
      const ids = await storedTraces(page);
      const other = ids.find((id) => id !== traceId);
      await page.click('[data-testid="viewer-tab-compare"]');
      await page.waitForSelector('[data-testid="qr-compare-form"]');
      for (const [side, id] of [
        ['a', traceId],
        ['b', other],
      ]) {
        await page.click(`#qr-compare-${side}`);
        // the list offers every stored trace; pick the one whose description names the id
        await page.locator('[role="option"]', { hasText: id }).first().click();
      }
      await legible(page, assert, 'the compare form');
      const file = path.join(out, `viewer-compare-form-${tag}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
      await page.click('[data-testid="viewer-compare"]');
      await shown(page, `q.queryType === 'compare' && q.traceIds[0] === ${JSON.stringify(traceId)}`, 'compare');
      await page.waitForSelector('[data-testid="qr-compare-verdict"]', { timeout: 30_000 });
      const verdict = await page.textContent('[data-testid="qr-compare-verdict"]');
      assert(verdict.trim().length > 0, 'the comparison has no verdict');
      const shot = path.join(out, `viewer-compare-${tag}.png`);
      await page.screenshot({ path: shot });
      shots.push(shot);
    });

    await check(`${tag}: the viewer opens a bundle file from disk`, async () => {
      const b64 = await page.evaluate(async (id) => {
        const cfg = window.__QUERYREPLAY_VIEWER__;
        const r = await fetch(`/api/datasources/uid/${cfg.datasource.uid}/resources/traces/${id}/bundle`);
        const bytes = new Uint8Array(await r.arrayBuffer());
        let s = '';
        for (const b of bytes) {
          s += String.fromCharCode(b);
        }
        return btoa(s);
      }, traceId);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queryreplay-bundle-'));
      const file = path.join(dir, 'hash_join.json.gz');
      fs.writeFileSync(file, Buffer.from(b64, 'base64'));
      const before = await storedTraces(page);
      await page.setInputFiles('[data-testid="viewer-open-file"]', file);
      await shown(page, `q.queryType === 'bundle' && !${JSON.stringify(before)}.includes(q.traceId)`, 'bundle file');
      const status = await page.textContent('[data-testid="viewer-status"]');
      assert(status.includes('opened hash_join.json.gz as trace'), `status: ${status}`);
      const title = await page.textContent('[data-testid="harness-title"]');
      assert(title === 'hash_join.json.gz', `title ${title}`);
      const ops = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels.at(-1).trace.operators.length);
      assert(ops > 0, 'the uploaded bundle drew no operators');
      fs.rmSync(dir, { recursive: true, force: true });
      const shot = path.join(out, `viewer-file-${tag}.png`);
      await page.screenshot({ path: shot });
      shots.push(shot);
    });
  }
  await page.setViewportSize({ width: 1500, height: 700 });
}

// alone: node tests/browser/viewertool.mjs (after npm run build:harness and go build of bin/harness-server)
if (process.argv[1] === new URL(import.meta.url).pathname) {
  const out = path.join(root, 'tests', 'output');
  fs.mkdirSync(out, { recursive: true });
  const server = await startServer();
  const { context, close } = await launchBrowser();
  const page = await context.newPage();
  const errors = [];
  watchConsole(page, errors);
  let failed = 0;
  const check = async (name, fn) => {
    try {
      await fn();
      console.log(`ok    ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL  ${name}: ${e.message}`);
    }
  };
  const assert = (cond, msg) => {
    if (!cond) {
      throw new Error(msg);
    }
  };
  const shots = [];
  try {
    await openHarness(page, server.url, {
      sql: "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'",
    });
    const traceId = await page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
    await viewerTool({ page, server, traceId, check, assert, out, shots });
    if (errors.length) {
      failed++;
      console.log(`FAIL  console errors:\n${errors.join('\n')}`);
    }
    console.log(`screenshots: ${shots.map((f) => path.relative(root, f)).join(', ')}`);
  } finally {
    await close();
    await server.stop();
  }
  process.exit(failed > 0 ? 1 : 0);
}
