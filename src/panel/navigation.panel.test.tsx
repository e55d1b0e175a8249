import React from 'react';
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { createTheme } from '@grafana/data';
import { ReplayPanel } from './ReplayPanel';
import { DebugPanel } from './replay/debug';
import { paletteFromTheme } from './render/palette';
import { TimelineLayout } from './render/layout';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { contextOf, installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';

// Panning, the zoom keys, the colour option and the lock list, through the
// whole panel (ReplayPanel → TimelineView → the canvas), on the golden frames.

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

const frames = goldenFrames('trace_response');
const debug = () =>
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: { panels: DebugPanel[] } }).__QUERYREPLAY_DEBUG__.panels[0];
const windowOf = () => debug().store.get().window;
const spanOf = (w: { fromUs: number; toUs: number }) => w.toUs - w.fromUs;
// the panel draws with the theme @grafana/ui gives outside Grafana: the default one
const palette = paletteFromTheme(createTheme());

beforeEach(() => {
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: unknown }).__QUERYREPLAY_DEBUG__ = { panels: [] };
});

describe('zoom keys', () => {
  it.each(['+', '='])('%s zooms in around the playhead and - zooms back out', async (key) => {
    render(<ReplayPanel {...props(frames)} />);
    const root = screen.getByTestId('qr-replay');
    const full = windowOf();
    act(() => debug().store.set({ playheadUs: 700 }));
    fireEvent.keyDown(root, { key });
    const inW = windowOf();
    expect(spanOf(inW)).toBeCloseTo(spanOf(full) / 1.5, 0);
    // around the playhead: it stays where it was on the axis
    const frac = (w: typeof full) => (700 - w.fromUs) / spanOf(w);
    expect(frac(inW)).toBeCloseTo(frac(full), 2);
    fireEvent.keyDown(root, { key: '-' });
    expect(spanOf(windowOf())).toBeCloseTo(spanOf(full), 0);
  });

  it('ignores the keys while typing in a form control', () => {
    render(
      <div>
        <ReplayPanel {...props(frames)} />
      </div>
    );
    const full = windowOf();
    const input = document.createElement('input');
    screen.getByTestId('qr-replay').appendChild(input);
    fireEvent.keyDown(input, { key: '+' });
    expect(windowOf()).toEqual(full);
  });
});

describe('panning the timeline', () => {
  function zoomedIn() {
    render(<ReplayPanel {...props(frames)} />);
    const root = screen.getByTestId('qr-replay');
    act(() => debug().store.set({ playheadUs: 0 }));
    fireEvent.keyDown(root, { key: '+' });
    fireEvent.keyDown(root, { key: '+' });
    return { overlay: screen.getByTestId('qr-timeline-overlay'), w0: windowOf() };
  }
  const plotW = () => (debug().stats.layout as TimelineLayout).plotW;

  it('shift-wheel moves the window later by the wheel distance, keeping its span', async () => {
    const { overlay, w0 } = zoomedIn();
    await nextFrame();
    // zoomed in at the start: there is room to pan later
    expect(w0.fromUs).toBe(debug().trace.startUs);
    expect(w0.toUs).toBeLessThan(debug().trace.endUs);
    fireEvent.wheel(overlay, { deltaY: 100, shiftKey: true, clientX: 400, clientY: 100 });
    const w1 = windowOf();
    expect(spanOf(w1)).toBeCloseTo(spanOf(w0), 6);
    expect(w1.fromUs - w0.fromUs).toBeCloseTo((100 / plotW()) * spanOf(w0), 3);
    // and back
    fireEvent.wheel(overlay, { deltaY: -100, shiftKey: true, clientX: 400, clientY: 100 });
    expect(windowOf().fromUs).toBeCloseTo(w0.fromUs, 3);
  });

  it('a horizontal wheel (trackpad) pans without shift; a vertical one zooms at the pointer', async () => {
    const { overlay, w0 } = zoomedIn();
    await nextFrame();
    fireEvent.wheel(overlay, { deltaX: 80, deltaY: 5, clientX: 400, clientY: 100 });
    const w1 = windowOf();
    expect(spanOf(w1)).toBeCloseTo(spanOf(w0), 6);
    expect(w1.fromUs).toBeGreaterThan(w0.fromUs);
    fireEvent.wheel(overlay, { deltaY: -100, clientX: 400, clientY: 100 });
    expect(spanOf(windowOf())).toBeLessThan(spanOf(w1));
  });

  it('never pans past the end of the trace', async () => {
    const { overlay, w0 } = zoomedIn();
    await nextFrame();
    const full = debug().trace;
    for (let i = 0; i < 50; i++) {
      fireEvent.wheel(overlay, { deltaY: 500, shiftKey: true, clientX: 400, clientY: 100 });
    }
    const w = windowOf();
    expect(w.toUs).toBeCloseTo(full.endUs, 6);
    expect(spanOf(w)).toBeCloseTo(spanOf(w0), 6);
  });
});

describe('colour by operator or by lane', () => {
  /** Fills drawn inside the read lane's plot area, lane background left out. */
  async function readFills(colorBy: 'operator' | 'lane'): Promise<string[]> {
    render(<ReplayPanel {...props(frames, 1000, 420, { colorBy })} />);
    await nextFrame();
    const L = debug().stats.layout as TimelineLayout;
    const box = L.lanes.find((l) => l.name === 'read')!;
    const bg = [palette.laneBackground, palette.laneBackgroundAlt];
    return contextOf(screen.getByTestId('qr-timeline-base'))
      .rects.filter((r) => r.y >= box.y && r.y + r.h <= box.y + box.h && r.x >= L.plotX - 2)
      .filter((r) => !(r.w === L.plotW && bg.includes(r.fill)))
      .map((r) => r.fill);
  }
  const read = () => debug().trace.lanes.read!;

  it('draws each read in the colour of its operator by default', async () => {
    const fills = await readFills('operator');
    const want = Array.from({ length: read().n }, (_, i) => palette.operator(read().node[i]));
    expect(want.filter((c) => c !== palette.lane.read).length).toBeGreaterThanOrEqual(2);
    expect(fills).toEqual(want);
  });

  it('draws every read in the Read lane colour with colorBy lane', async () => {
    const fills = await readFills('lane');
    expect(fills).toEqual(Array(read().n).fill(palette.lane.read));
  });
});

describe('the lock list', () => {
  it('shows the locks held at the playhead with the rows their resources resolved to', async () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    fireEvent.click(screen.getByTestId('qr-tab-locks'));
    // 800 µs: the X key lock (700–900 µs) is held, the S page lock (28–31 µs) long released
    act(() => debug().store.set({ playheadUs: 800 }));
    const list = screen.getByTestId('qr-locks');
    expect(screen.getByTestId('qr-locks-summary')).toHaveTextContent('1 held now · 2 acquired so far');
    const rows = within(list).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(1);
    const cells = within(rows[0])
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells.slice(0, 4)).toEqual([
      'X',
      'KEY 5:72057594045136896:(8194443284a0)',
      'dbo.Orders.PK_Orders',
      'OrderID=42',
    ]);
    expect(cells[4]).toContain('100 µs');
    expect(cells[4]).toContain('to end');
    expect(cells[5]).toContain('Clustered Index Scan');
  });

  it('shows a dash where the resource did not resolve to a row (a page lock)', async () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    fireEvent.click(screen.getByTestId('qr-tab-locks'));
    act(() => debug().store.set({ playheadUs: 29 }));
    const rows = within(screen.getByTestId('qr-locks')).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(1);
    const cells = within(rows[0])
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells.slice(0, 4)).toEqual(['S', 'PAGE 5:1:280', 'dbo.Customers.PK_Customers', '—']);
  });
});
