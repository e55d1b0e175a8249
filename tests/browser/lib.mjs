// Shared by the browser test and the performance check: start the harness
// server (stand-in + real datasource + pkg/viewer) and Debian's headless
// Chromium through playwright-core, with no browser download.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { chromium } from 'playwright-core';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

export function chromiumPath() {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/lib/chromium/chromium-headless-shell',
    '/usr/bin/chromium-headless-shell',
  ].filter(Boolean);
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error(
      `no chromium-headless-shell found (tried ${candidates.join(', ')}); install the Debian package chromium-headless-shell (make setup)`
    );
  }
  return found;
}

/** Starts bin/harness-server and resolves with its ready line {url, traceIds, events, token} (token: the viewer's API token). */
export function startServer(args = [], timeoutMs = 120_000) {
  const bin = path.join(root, 'bin', 'harness-server');
  if (!fs.existsSync(bin)) {
    throw new Error(`${bin} is missing: run make test-browser (it builds it)`);
  }
  const child = spawn(bin, ['-assets', path.join(root, 'tests', 'browser', 'dist'), ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr = [];
  child.stderr.on('data', (d) => stderr.push(String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`harness-server not ready after ${timeoutMs} ms: ${stderr.join('')}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`harness-server exited with ${code}: ${stderr.join('')}`));
    });
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const ready = JSON.parse(line);
      resolve({
        ...ready,
        stderr,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.stdin.end();
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      });
    });
  });
}

/** Debian's headless shell, flags that keep it off the network, a fresh profile. */
export async function launchBrowser(viewport = { width: 1500, height: 700 }) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'queryreplay-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    headless: true,
    viewport,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/** Collects page errors and console errors; the tests fail on any. */
export function watchConsole(page, errors) {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().includes('/api/ds/query')) {
      errors.push(`HTTP ${r.status()}: ${r.url()}`);
    }
  });
  page.on('console', (m) => {
    if (m.type() === 'error') {
      errors.push(`console.error: ${m.text()}`);
    }
  });
}

/** Resolves after the page has drawn n animation frames. */
export function animationFrames(page, n = 3) {
  return page.evaluate(
    (k) =>
      new Promise((r) => {
        let i = 0;
        const f = () => (++i >= k ? r() : requestAnimationFrame(f));
        requestAnimationFrame(f);
      }),
    n
  );
}

export async function openHarness(page, url, params) {
  const q = new URLSearchParams(params).toString();
  await page.goto(`${url}?${q}`);
  await page.waitForFunction(() => window.__harness && window.__harness.state !== 'loading', null, {
    timeout: 120_000,
  });
  const state = await page.evaluate(() => ({ state: window.__harness.state, error: window.__harness.error }));
  if (state.state !== 'ready') {
    throw new Error(`harness: ${state.error}`);
  }
  // first base draw
  await page.waitForFunction(() => (window.__QUERYREPLAY_DEBUG__.panels[0]?.stats.baseDraws ?? 0) > 0, null, {
    timeout: 30_000,
  });
}

export function percentile(sorted, p) {
  if (sorted.length === 0) {
    return NaN;
  }
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/**
 * Runs one part of replay.test.mjs on its own (`node tests/browser/<part>.mjs`, after npm run build:harness and
 * go build of bin/harness-server): a server, a browser, the hash join traced once (cold cache), then part({page, server,
 * traceId, check, assert, out, shots}). Exits 1 when a check fails or the page logged an error.
 */
export async function runAlone(part) {
  const HASH_JOIN =
    "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'";
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
    if (typeof msg !== 'string' || msg.trim() === '') {
      throw new Error('assert called without a message');
    }
    if (!cond) {
      throw new Error(msg);
    }
  };
  const shots = [];
  try {
    // traced as replay.test.mjs traces it first: cold cache, no read-ahead
    await openHarness(page, server.url, {
      query: JSON.stringify({
        queryType: 'trace',
        sql: HASH_JOIN,
        database: 'QueryReplayDemo',
        options: { clearBufferPool: true, disableReadAhead: true },
      }),
      title: 'Hash join',
    });
    const traceId = await page.getAttribute('[data-testid="qr-replay"]', 'data-trace-id');
    await part({ page, server, traceId, check, assert, out, shots });
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

/** The timeline legend's keys that are cut or hidden by its box (text of each). */
export function legendKeysCut(page) {
  return page.$eval('[data-testid="qr-phase-legend"]', (el) => {
    const box = el.getBoundingClientRect();
    return [...el.children]
      .filter((k) => {
        const r = k.getBoundingClientRect();
        return r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5 || r.width === 0;
      })
      .map((k) => k.textContent);
  });
}
