// make perf-browser: the replay panel on a generated 1,000,000-event trace
// (standin.GenerateTrace through the real parsers, timeline, trace store and
// frames code), in Debian's headless Chromium. Measures, in the browser:
//   first draw  — ms from the converted frames being handed to the panel to
//                 its first base-layer draw;
//   frame time  — requestAnimationFrame intervals during 5 s of playback
//                 (median and p95), and the panel's own work per frame;
//   zoom        — base redraw ms when zooming, and the view-query round trip.
// Twice: with Grafana's default row budget (maxDataPoints = panel width, so
// lanes arrive binned and zooming fetches detail), and with every event as
// a raw row (maxDataPoints = 1,000,000). Both runs have the plan diagram
// open beside the timeline (issue 28), so its per-frame redraw is in the
// frame times; PERF_OPERATORS sets the generated plan's size. Prints the figures and fails when
// median ≥ 16 ms, p95 ≥ 33 ms or first draw ≥ 1 s. It also says why Grafana's
// State Timeline is not measured beside it (stateTimelineNote).
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, openHarness, percentile, root, startServer, watchConsole } from './lib.mjs';

/**
 * Issue 16 asks for the State Timeline on the same frames as a baseline. It
 * cannot be mounted here: the panel (public/app/plugins/panel/state-timeline,
 * drawing with app/core/components/TimelineChart) lives only in the
 * grafana/grafana repository (AGPL-3.0) and is not published to npm, and no
 * Grafana server runs on this machine. The note checks the installed
 * @grafana/ui for a timeline export, so it stops claiming that once one exists.
 */
function stateTimelineNote() {
  const ui = path.join(root, 'node_modules', '@grafana', 'ui');
  const version = JSON.parse(fs.readFileSync(path.join(ui, 'package.json'), 'utf8')).version;
  const types = fs.readFileSync(path.join(ui, 'dist', 'types', 'index.d.ts'), 'utf8');
  if (/\b(TimelineChart|StateTimeline)\b/.test(types)) {
    return {
      ok: false,
      text: `@grafana/ui ${version} exports a timeline chart: measure Grafana's State Timeline on the same frames here`,
    };
  }
  return {
    ok: true,
    text:
      "Grafana's State Timeline on the same frames: not measured. The panel (public/app/plugins/panel/state-timeline, " +
      'drawn by app/core/components/TimelineChart) exists only inside the grafana/grafana repository (AGPL-3.0); it is ' +
      `not published to npm (@grafana/ui ${version} exports no timeline chart) and no Grafana server runs here, so it ` +
      'cannot be mounted in this browser.',
  };
}

const PAGES = Number(process.env.PERF_PAGES ?? 200_000);
const OPERATORS = process.env.PERF_OPERATORS ? ['-operators', String(Number(process.env.PERF_OPERATORS))] : [];
const WIDTH = 1400;
const HEIGHT = 560;

async function measure(page, url, traceId, maxDataPoints, linkedView = 'diagram') {
  const t0 = Date.now();
  await openHarness(page, url, {
    traceId,
    width: WIDTH,
    height: HEIGHT,
    maxDataPoints,
    title: `1M events, maxDataPoints ${maxDataPoints}, ${linkedView === 'diagram' ? 'plan diagram' : linkedView} on screen`,
    // issue 28: measured with the plan diagram beside the timeline
    options: JSON.stringify({ linkedView }),
  });
  const load = await page.evaluate(() => {
    const h = window.__harness;
    const s = window.__QUERYREPLAY_DEBUG__.panels[0].stats;
    return {
      responseMB: h.responseBytes / 1e6,
      fetchMs: h.fetchMs,
      convertMs: h.convertMs,
      rows: h.rows,
      firstDrawMs: s.firstDrawAt - h.framesAt,
      // the diagram's first commit (PlanDiagram marks it), and how many operator boxes it shows
      diagramMs: (performance.getEntriesByName('queryreplay:diagram-drawn').at(-1)?.startTime ?? NaN) - h.framesAt,
      diagramBoxes: document.querySelectorAll('[data-testid^="qr-diagram-node-"]').length,
      events: window.__QUERYREPLAY_DEBUG__.panels[0].trace.events,
      lanes: s.lanes,
    };
  });
  const wall = Date.now() - t0;
  // play for 5 s at 1× and record every animation frame's interval
  const play = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const p = window.__QUERYREPLAY_DEBUG__.panels[0];
        const w = p.store.get().window;
        p.stats.frameWorkMs.length = 0;
        p.store.set({ playheadUs: w.fromUs, playing: true, speed: 1 });
        const intervals = [];
        const busy = [];
        // frame time: from the start of the frame's animation callbacks to
        // the first task after it (script, React, style, layout and paint of
        // that frame all run in between); interval: between frames (vsync-bound)
        const channel = new MessageChannel();
        let frameStart = 0;
        channel.port1.onmessage = () => busy.push(performance.now() - frameStart);
        let last = performance.now();
        const start = last;
        const tick = (now) => {
          frameStart = performance.now();
          channel.port2.postMessage(0);
          intervals.push(now - last);
          last = now;
          if (now - start < 5000) {
            requestAnimationFrame(tick);
          } else {
            p.store.set({ playing: false });
            resolve({ intervals, busy, work: [...p.stats.frameWorkMs], moved: p.store.get().playheadUs - w.fromUs });
          }
        };
        requestAnimationFrame(tick);
      })
  );
  // zoom in four times around the middle (base redraws), then wait for detail
  const zoom = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const p = window.__QUERYREPLAY_DEBUG__.panels[0];
        const draws = [];
        let i = 0;
        const fetchesBefore = p.stats.detailFetches;
        const t0 = performance.now();
        const step = () => {
          const w = p.store.get().window;
          const mid = (w.fromUs + w.toUs) / 2;
          const s = (w.toUs - w.fromUs) / 4;
          p.store.set({ window: { fromUs: mid - s / 2, toUs: mid + s / 2 } });
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              draws.push(p.stats.lastBaseMs);
              if (++i < 4) {
                step();
                return;
              }
              const deadline = performance.now() + 20000;
              const wait = () => {
                if (p.stats.detailFetches > fetchesBefore || performance.now() > deadline) {
                  resolve({
                    draws,
                    detailMs: p.stats.detailFetches > fetchesBefore ? performance.now() - t0 : null,
                    lanes: p.stats.lanes,
                  });
                } else {
                  setTimeout(wait, 20);
                }
              };
              wait();
            })
          );
        };
        step();
      })
  );
  const iv = play.intervals.slice(1).sort((a, b) => a - b);
  const busy = play.busy.slice(1).sort((a, b) => a - b);
  const work = play.work.sort((a, b) => a - b);
  return {
    maxDataPoints,
    ...load,
    wallMs: wall,
    frames: iv.length,
    medianMs: percentile(busy, 50),
    p95Ms: percentile(busy, 95),
    intervalMedianMs: percentile(iv, 50),
    intervalP95Ms: percentile(iv, 95),
    workMedianMs: percentile(work, 50),
    workP95Ms: percentile(work, 95),
    playedUs: play.moved,
    zoomRedrawMs: zoom.draws,
    detailMs: zoom.detailMs,
    zoomLanes: zoom.lanes,
  };
}

const fmt = (v, d = 1) => (v === null || v === undefined || Number.isNaN(v) ? '—' : Number(v).toFixed(d));

const server = await startServer(['-generate', String(PAGES), ...OPERATORS], 600_000);
const { context, close } = await launchBrowser({ width: WIDTH + 40, height: HEIGHT + 80 });
const errors = [];
let failed = 0;
let passed = 0;
try {
  const page = await context.newPage();
  watchConsole(page, errors);
  const traceId = server.traceIds[0];
  console.log(`generated trace ${traceId}: ${server.events.toLocaleString('en-US')} events`);
  // the first run is a reference on the same machine at the same moment: the plan tree, not the diagram,
  // beside the timeline — what the diagram adds to a frame is the difference (the machine is shared, so
  // figures from another run are not comparable)
  const runs = [
    { mdp: WIDTH, view: 'plan', reference: true },
    { mdp: WIDTH, view: 'diagram' },
    { mdp: 1_000_000, view: 'diagram' },
  ];
  for (const { mdp, view, reference } of runs) {
    const r = await measure(page, server.url, traceId, mdp, view);
    console.log(
      [
        `${reference ? 'reference (plan tree, no diagram), ' : ''}maxDataPoints ${mdp}: response ${fmt(r.responseMB)} MB (${r.rows.toLocaleString('en-US')} rows), fetch ${fmt(r.fetchMs, 0)} ms, convert ${fmt(r.convertMs, 0)} ms`,
        `  first draw ${fmt(r.firstDrawMs)} ms after the frames arrived; plan diagram (${r.diagramBoxes} operators) ${fmt(r.diagramMs)} ms`,
        `  playback: ${r.frames} frames in 5 s; frame time median ${fmt(r.medianMs, 2)} ms, p95 ${fmt(r.p95Ms, 2)} ms; frame interval median ${fmt(r.intervalMedianMs)} ms, p95 ${fmt(r.intervalP95Ms)} ms; overlay draw median ${fmt(r.workMedianMs, 2)} ms, p95 ${fmt(r.workP95Ms, 2)} ms`,
        `  zoom: base redraws ${r.zoomRedrawMs.map((v) => fmt(v)).join(', ')} ms; detail view query ${r.detailMs === null ? 'not needed (raw rows)' : `${fmt(r.detailMs, 0)} ms`}`,
        `  lanes drawn: ${Object.entries(r.lanes)
          .map(([k, v]) => `${k} ${v.kind} ${v.drawn}`)
          .join(', ')}`,
      ].join('\n')
    );
    if (reference) {
      continue;
    }
    const ok = r.medianMs < 16 && r.p95Ms < 33 && r.firstDrawMs < 1000 && r.diagramBoxes > 0 && r.diagramMs < 1000;
    ok ? passed++ : failed++;
    if (!ok) {
      console.log(
        `FAIL  maxDataPoints ${mdp}: targets are median < 16 ms, p95 < 33 ms, first draw (timeline and plan diagram) < 1000 ms`
      );
    }
  }
  const note = stateTimelineNote();
  console.log(note.text);
  if (!note.ok) {
    failed++;
    console.log(`FAIL  ${note.text}`);
  }
  if (errors.length) {
    failed++;
    console.log(`FAIL  console errors:\n${errors.join('\n')}`);
  }
} finally {
  await close();
  await server.stop();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
