// The plan diagram (issue 28), run by replay.test.mjs: at 1280×720 and
// 1920×1080, in both themes, the hash join's actual plan is drawn as a tree
// with the root at the left; every operator box names its operator and
// object (in full on hover) with its estimated and actual rows and reads;
// as the playhead moves each box shows its state and its rows and page
// reads so far; a click filters the lanes, a selected event outlines its
// operator, and zoom works. A synthetic 121-operator plan checks that a big
// plan opens collapsed and expands. Screenshots go to tests/output/.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { animationFrames as frames, legendKeysCut, openHarness, runAlone, startServer } from './lib.mjs';

const SIZES = [
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
];
const ACTIVE = ['consuming', 'building', 'probing', 'emitting'];

// the number format of the boxes (PlanTree's compact), to compare the DOM with the trace's figures
function compact(n) {
  if (n >= 1e6) {
    return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  }
  if (n >= 1e4) {
    return `${(n / 1e3).toFixed(n >= 1e5 ? 0 : 1)}k`;
  }
  return n.toLocaleString('en-US');
}

const operators = (page) =>
  page.evaluate(() =>
    window.__QUERYREPLAY_DEBUG__.panels[0].trace.operators.map((o) => ({
      nodeId: o.nodeId,
      parentId: o.parentId,
      name: o.name,
      object: o.object,
      executed: o.executed,
      startUs: o.startUs,
      endUs: o.endUs,
      actualRows: o.actualRows,
      estimatedRows: o.estimatedRows,
      logicalReads: o.logicalReads,
      reads: o.reads,
      waits: o.waits,
      children: o.children,
      phases: o.phases.map((p) => ({ kind: p.kind, startUs: p.startUs, endUs: p.endUs })),
    }))
  );
const setStore = (page, patch) => page.evaluate((p) => window.__QUERYREPLAY_DEBUG__.panels[0].store.set(p), patch);
/** Moves the playhead and waits until the diagram shows that time (its figures follow at 15 Hz). */
async function moveTo(page, us) {
  await setStore(page, { playing: false, playheadUs: us });
  const shown = await page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get().playheadUs);
  await page.waitForSelector(`[data-testid="qr-diagram-plane"][data-playhead="${shown}"]`, { timeout: 5000 });
}
const storeState = (page) => page.evaluate(() => window.__QUERYREPLAY_DEBUG__.panels[0].store.get());
const text = (page, id) => page.textContent(`[data-testid="${id}"]`);
const attr = (page, id, a) => page.getAttribute(`[data-testid="${id}"]`, a);

async function open(page, server, traceId, theme, extra = {}) {
  await openHarness(page, server.url, {
    traceId,
    theme,
    title: 'Plan diagram',
    options: JSON.stringify({ linkedView: 'diagram' }),
    ...extra,
  });
  await page.waitForSelector('[data-testid="qr-plan-diagram"]', { timeout: 10_000 });
  await frames(page, 2);
}

/** Names, objects and figures of every box against the trace's operators. */
async function assertBoxes(page, ops, assert) {
  for (const op of ops) {
    const id = op.nodeId;
    const name = await text(page, `qr-diagram-name-${id}`);
    assert(name.includes(op.name), `box ${id} names ${JSON.stringify(name)}, not ${op.name}`);
    const title = await attr(page, `qr-diagram-node-${id}`, 'title');
    assert(title.includes(op.name), `box ${id} hover text lacks ${op.name}: ${title}`);
    if (op.object) {
      assert(title.includes(op.object), `box ${id} hover text lacks ${op.object}: ${title}`);
      const table = op.object.replace(/[[\]]/g, '').split('.').slice(-2)[0];
      const shown = await text(page, `qr-diagram-object-${id}`);
      assert(shown.includes(table), `box ${id} shows object ${JSON.stringify(shown)} without its table ${table}`);
    }
    const rows = await text(page, `qr-diagram-rows-${id}`);
    if (op.actualRows !== null) {
      assert(rows.includes(`/ ${compact(op.actualRows)}`), `box ${id} rows ${rows}, actual ${op.actualRows}`);
    }
    if (op.estimatedRows !== null) {
      assert(rows.includes(`est ${compact(op.estimatedRows)}`), `box ${id} rows ${rows}, est ${op.estimatedRows}`);
    }
    const reads = await text(page, `qr-diagram-reads-${id}`);
    if (op.logicalReads !== null) {
      assert(
        reads.includes(`logical ${compact(op.logicalReads)}`),
        `box ${id} reads ${reads}, logical ${op.logicalReads}`
      );
    }
    const sofar = await text(page, `qr-diagram-sofar-${id}`);
    assert(sofar.includes(`/${compact(op.reads)}`), `box ${id} says ${sofar}, traced page reads ${op.reads}`);
  }
}

/** The root is left of its children: the data flows right to left. */
async function assertRightToLeft(page, ops, assert) {
  for (const op of ops.filter((o) => o.parentId !== null)) {
    const child = await page.locator(`[data-testid="qr-diagram-node-${op.nodeId}"]`).boundingBox();
    const parent = await page.locator(`[data-testid="qr-diagram-node-${op.parentId}"]`).boundingBox();
    assert(
      child && parent && child.x > parent.x + parent.width - 1,
      `operator ${op.nodeId} is not right of its parent ${op.parentId}`
    );
  }
}

/** States, rows and page reads as the playhead moves: before, inside each operator's phases, and after. */
async function assertStates(page, ops, assert) {
  const executed = ops.filter((o) => o.executed);
  const first = Math.min(...executed.map((o) => o.startUs));
  const last = Math.max(...executed.map((o) => o.endUs));
  await moveTo(page, first - 1);
  for (const op of executed) {
    const st = await attr(page, `qr-diagram-node-${op.nodeId}`, 'data-state');
    assert(st === 'waiting', `before the first operator starts, ${op.nodeId} is ${st}`);
    if (op.actualRows !== null) {
      const rows = await text(page, `qr-diagram-rows-${op.nodeId}`);
      assert(rows.startsWith('rows ≈0 '), `before any row, ${op.nodeId} says ${rows}`);
    }
  }
  const seen = new Set();
  for (const op of executed) {
    for (const ph of op.phases) {
      const t = Math.round((ph.startUs + ph.endUs) / 2);
      await moveTo(page, t);
      const st = await attr(page, `qr-diagram-node-${op.nodeId}`, 'data-state');
      assert(ACTIVE.includes(st), `inside its ${ph.kind} phase at ${t} µs, ${op.nodeId} is ${st}`);
      seen.add(st);
    }
  }
  assert(seen.size >= 2, `the phases showed only ${[...seen]}`);
  await moveTo(page, last + 1);
  for (const op of executed) {
    const st = await attr(page, `qr-diagram-node-${op.nodeId}`, 'data-state');
    assert(st === 'done', `after the last operator, ${op.nodeId} is ${st}`);
    if (op.actualRows !== null) {
      const rows = await text(page, `qr-diagram-rows-${op.nodeId}`);
      assert(rows.startsWith(`rows ≈${compact(op.actualRows)} `), `at the end, ${op.nodeId} says ${rows}`);
    }
    const sofar = await text(page, `qr-diagram-sofar-${op.nodeId}`);
    assert(sofar.includes(`pages ${compact(op.reads)}/${compact(op.reads)}`), `at the end, ${op.nodeId} says ${sofar}`);
    assert(sofar.includes(`waits ${compact(op.waits)}/${compact(op.waits)}`), `at the end, ${op.nodeId} says ${sofar}`);
  }
  return seen;
}

export async function planDiagram({ page, server, traceId, check, assert, out, shots }) {
  for (const size of SIZES) {
    for (const theme of ['dark', 'light']) {
      await check(
        `${size.width}×${size.height} ${theme}: the plan diagram names, counts and animates every operator`,
        async () => {
          await page.setViewportSize(size);
          await open(page, server, traceId, theme);
          const ops = await operators(page);
          assert(ops.length >= 3, `only ${ops.length} operators`);
          await assertBoxes(page, ops, assert);
          await assertRightToLeft(page, ops, assert);
          // arrows sized by actual rows: more rows, a wider arrow
          const edges = [];
          for (const op of ops.filter((o) => o.parentId !== null && o.actualRows !== null)) {
            edges.push({
              rows: op.actualRows,
              width: Number(await attr(page, `qr-diagram-edge-${op.nodeId}`, 'data-width')),
            });
          }
          edges.sort((a, b) => a.rows - b.rows);
          for (let i = 1; i < edges.length; i++) {
            if (edges[i].rows > edges[i - 1].rows) {
              assert(edges[i].width > edges[i - 1].width, `arrow widths ${JSON.stringify(edges)}`);
            }
          }
          // the diagram's boxes sit inside the panel, readable: the panel does not scroll them out of the window
          const box = await page.locator('[data-testid="qr-plan-diagram"]').boundingBox();
          assert(
            box.x + box.width <= size.width && box.y + box.height <= size.height,
            `diagram overflows ${JSON.stringify(box)}`
          );
          const seen = await assertStates(page, ops, assert);
          // mid-way for the screenshot: something is running
          const join = ops.find((o) => o.phases.some((p) => p.kind === 'probe')) ?? ops[0];
          const probe = join.phases.find((p) => p.kind === 'probe') ?? join.phases[0];
          await setStore(page, { playheadUs: Math.round((probe.startUs + probe.endUs) / 2) });
          await frames(page, 2);
          const file = path.join(out, `diagram-${size.width}x${size.height}-${theme}.png`);
          await page.screenshot({ path: file });
          shots.push(file);
          assert(seen.size >= 2, 'states');
          // the legend under the narrowed timeline keeps every key whole (at 1280×720 two were cut)
          const cut = await legendKeysCut(page);
          assert(cut.length === 0, `legend keys cut or hidden: ${JSON.stringify(cut)}`);
          // so does the side panel's tab strip ("Event & stack" was cut to "Ev")
          const tabs = await page.$$eval('[role="tab"], [role="tablist"] a, [role="tablist"] button', (els) => {
            const strip = els[0]?.closest('[role="tablist"]')?.parentElement?.getBoundingClientRect();
            return strip
              ? els.filter((e) => e.getBoundingClientRect().right > strip.right + 0.5).map((e) => e.textContent)
              : [];
          });
          assert(tabs.length === 0, `tabs cut: ${JSON.stringify(tabs)}`);
        }
      );
    }
  }
  await page.setViewportSize({ width: 1500, height: 700 });

  await check(
    'plan diagram: a click filters the lanes, a selected event outlines its operator, zoom works',
    async () => {
      await open(page, server, traceId, 'dark');
      const ops = await operators(page);
      const leaf = ops.find((o) => o.children.length === 0 && o.reads > 0) ?? ops[ops.length - 1];
      await page.click(`[data-testid="qr-diagram-node-${leaf.nodeId}"]`);
      let s = await storeState(page);
      assert(s.filterNode === leaf.nodeId, `filter ${s.filterNode} after clicking ${leaf.nodeId}`);
      await page.click(`[data-testid="qr-diagram-node-${leaf.nodeId}"]`);
      s = await storeState(page);
      assert(s.filterNode === null, `filter ${s.filterNode} after the second click`);
      // step to an event with the keyboard: its operator is outlined in the diagram
      await setStore(page, { playheadUs: s.window.fromUs, selected: null, selectedNode: null });
      await page.focus('[data-testid="qr-replay"]');
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press('ArrowRight');
      }
      s = await storeState(page);
      const node = s.selected?.nodeId ?? s.selectedNode;
      assert(node !== null && node !== undefined && node >= 0, `the step selected ${JSON.stringify(s.selected)}`);
      await frames(page, 2);
      assert(
        (await attr(page, `qr-diagram-node-${node}`, 'data-selected')) === 'true',
        `operator ${node} of the selected event is not outlined`
      );
      const others = await page.$$eval('[data-selected="true"]', (els) => els.map((e) => e.dataset.testid));
      assert(others.length === 1, `outlined: ${others}`);
      // zoom: the buttons and the wheel
      const zoom = async () => Number(await attr(page, 'qr-diagram-view', 'data-zoom'));
      const z0 = await zoom();
      await page.click('[data-testid="qr-diagram-zoom-in"]');
      const z1 = await zoom();
      assert(z1 > z0, `zoom in: ${z0} → ${z1}`);
      const view = await page.locator('[data-testid="qr-diagram-view"]').boundingBox();
      await page.mouse.move(view.x + view.width / 2, view.y + view.height / 2);
      await page.mouse.wheel(0, 300);
      await frames(page, 2);
      const z2 = await zoom();
      assert(z2 < z1, `wheel out: ${z1} → ${z2}`);
      const w = await page.locator(`[data-testid="qr-diagram-node-${ops[0].nodeId}"]`).boundingBox();
      assert(Math.abs(w.width - 236 * z2) < 2, `box ${w.width} px wide at zoom ${z2}`);
    }
  );

  await check('plan diagram: a 121-operator plan opens collapsed, expands, and stays readable', async () => {
    const big = await startServer(['-generate', '400', '-operators', '121'], 300_000);
    try {
      await open(page, big, big.traceIds[0], 'light', { width: 1400, height: 640 });
      const ops = await operators(page);
      assert(ops.length >= 100, `the synthetic plan has ${ops.length} operators`);
      const count = async () => page.$$eval('[data-testid^="qr-diagram-node-"]', (els) => els.length);
      const shown = await count();
      assert(shown > 0 && shown < ops.length, `a ${ops.length}-operator plan opened with ${shown} boxes`);
      await page.click('[data-testid="qr-diagram-expand-all"]');
      await frames(page, 2);
      assert((await count()) === ops.length, `expand all shows ${await count()} of ${ops.length}`);
      await assertBoxes(page, ops, assert);
      await page.mouse.move(0, 0);
      const whole = path.join(out, 'diagram-121-operators-expanded-light.png');
      await page.screenshot({ path: whole });
      shots.push(whole);
      // boxes never overlap
      const rects = await page.$$eval('[data-testid^="qr-diagram-node-"]', (els) =>
        els.map((e) => [e.offsetLeft, e.offsetTop, e.offsetWidth, e.offsetHeight])
      );
      for (let i = 0; i < rects.length; i++) {
        for (let j = i + 1; j < rects.length; j++) {
          const [a, b] = [rects[i], rects[j]];
          const apart = a[0] + a[2] <= b[0] || b[0] + b[2] <= a[0] || a[1] + a[3] <= b[1] || b[1] + b[3] <= a[1];
          assert(apart, `boxes ${i} and ${j} overlap: ${a} / ${b}`);
        }
      }
      await page.click('[data-testid="qr-diagram-fit"]');
      await frames(page, 2);
      await page.click('[data-testid="qr-diagram-collapse"]');
      await frames(page, 2);
      assert((await count()) < ops.length, 'collapse left every box shown');
      await page.click('[data-testid="qr-diagram-100"]');
      await page.mouse.move(0, 0);
      await frames(page, 2);
      const file = path.join(out, 'diagram-121-operators-light.png');
      await page.screenshot({ path: file });
      shots.push(file);
    } finally {
      await big.stop();
    }
  });
}

// alone: node tests/browser/diagram.mjs (after npm run build:harness and go build of bin/harness-server)
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runAlone(planDiagram);
}
