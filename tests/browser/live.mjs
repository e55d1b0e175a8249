// A live trace in the viewer (issue 29): on a stand-in paced to the wall
// clock, the page runs a live query through pkg/viewer's event stream and
// the panel shows what a DBA reads while it runs — each operator's state
// and rows so far, the lanes, a playhead following now — then switches to
// the finished replay without reloading; a second live trace is cancelled
// from the panel's Cancel button.
// `node tests/browser/live.mjs` (after npm run build:harness and
// go build -o bin/harness-server ./internal/viewertest/harness-server).
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, root, startServer, watchConsole } from './lib.mjs';

const LIVE = 'SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Orders AS b WHERE b.OrderID <= 3000';

/** What the live panel shows now: status text, seq and each operator's state and rows so far. */
function liveView(page) {
  return page.evaluate(() => {
    const root = document.querySelector('[data-testid="qr-live"]');
    if (!root) {
      return null;
    }
    return {
      seq: Number(root.getAttribute('data-seq')),
      status: root.querySelector('[data-testid="qr-live-status"]')?.textContent ?? '',
      events: root.querySelector('[data-testid="qr-live-events"]')?.textContent ?? '',
      following: root.querySelector('[data-testid="qr-live-playhead"]')?.getAttribute('data-following'),
      ops: [...root.querySelectorAll('[data-testid="qr-live-op"]')].map((g) => ({
        node: Number(g.getAttribute('data-node')),
        state: g.getAttribute('data-state'),
        rows: Number(g.getAttribute('data-rows')),
        text: g.querySelector('[data-testid="qr-live-rows"]')?.textContent ?? '',
      })),
    };
  });
}

function openLive(page, url) {
  const q = new URLSearchParams({
    query: JSON.stringify({ queryType: 'trace', sql: LIVE, live: true }),
    title: 'Live',
  });
  return page.goto(`${url}?${q}`);
}

export async function liveChecks({ page, server, check, assert, out, shots }) {
  await check('a live trace grows, then the finished replay replaces it', async () => {
    await openLive(page, server.url);
    await page.waitForSelector('[data-testid="qr-live-op"]', { timeout: 60_000 });
    const seen = [];
    // read the panel as frames arrive, until the replay replaces it (bounded)
    for (let i = 0; i < 600; i++) {
      const v = await liveView(page);
      if (!v) {
        break;
      }
      if (!seen.length || seen.at(-1).seq !== v.seq) {
        seen.push(v);
      }
      if (seen.length === 2) {
        const shot = path.join(out, 'live-running.png');
        await page.screenshot({ path: shot });
        shots.push(shot);
      }
      await page.waitForFunction(
        (s) => Number(document.querySelector('[data-testid="qr-live"]')?.getAttribute('data-seq') ?? -1) !== s,
        v.seq,
        { timeout: 60_000 }
      );
    }
    const running = seen.filter((v) => v.status.startsWith('Running'));
    assert(running.length >= 2, `${running.length} running frames drawn: ${JSON.stringify(seen.map((v) => v.status))}`);
    for (const v of running) {
      assert(v.ops.length > 0, `a running frame drew no operators`);
      for (const o of v.ops) {
        assert(['waiting', 'running', 'done'].includes(o.state), `operator ${o.node} state ${o.state}`);
        assert(/rows/.test(o.text), `operator ${o.node} says ${o.text}`);
      }
      assert(v.following === 'true', 'the playhead does not follow now');
      assert(/events so far/.test(v.events), `events line ${v.events}`);
    }
    const rows = (v) => v.ops.reduce((n, o) => n + o.rows, 0);
    assert(rows(running.at(-1)) > rows(running[0]), `rows so far did not grow: ${running.map(rows)}`);
    assert(
      running.some((v) => v.ops.some((o) => o.state === 'running')),
      'no operator was ever running'
    );
    await page.waitForSelector('[data-testid="qr-replay"]', { timeout: 120_000 });
    const traceId = await page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
    assert(/^[0-9a-f]{32}$/.test(traceId ?? ''), `the replay has trace id ${traceId}`);
    // the finished replay is whole: its plan's counters are in the header
    // (a live read-back that missed the plan once left them unknown)
    const header = (await page.textContent('[data-testid="qr-replay"]')) ?? '';
    assert(!header.includes('no plan counters'), 'the finished replay has no plan counters');
    const h = await page.evaluate(() => ({ frames: window.__harness.liveFrames, end: window.__harness.liveEnd }));
    assert(h.frames >= 2, `${h.frames} live frames reached the page`);
    assert(!h.end?.error && !h.end?.cancelled, `the stream ended with ${JSON.stringify(h.end)}`);
    const shot = path.join(out, 'live-finished.png');
    await page.screenshot({ path: shot });
    shots.push(shot);
  });

  await check('Cancel stops a live trace', async () => {
    await openLive(page, server.url);
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="qr-live"]')?.getAttribute('data-seq') ?? 0) >= 1,
      null,
      { timeout: 60_000 }
    );
    await page.click('[data-testid="qr-live-cancel"]');
    await page.waitForFunction(
      () => /cancelled/.test(document.querySelector('[data-testid="qr-live-status"]')?.textContent ?? ''),
      null,
      { timeout: 60_000 }
    );
    const v = await liveView(page);
    assert(/^Stopped after/.test(v.status), `status after cancel: ${v.status}`);
    assert(!(await page.$('[data-testid="qr-replay"]')), 'a cancelled trace opened a replay');
    assert(!(await page.$('[data-testid="qr-live-cancel"]')), 'Cancel is still offered');
  });
}

// alone: node tests/browser/live.mjs
if (process.argv[1] === new URL(import.meta.url).pathname) {
  const out = path.join(root, 'tests', 'output');
  fs.mkdirSync(out, { recursive: true });
  const server = await startServer(['-pace', '-symbols=false']);
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
    await liveChecks({ page, server, check, assert, out, shots });
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
