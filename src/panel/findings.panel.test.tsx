import React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { ReplayPanel } from './ReplayPanel';
import { DebugPanel } from './replay/debug';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { contextOf, installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

// the golden trace with the golden findings frame after its trace frame, as a trace response has it
const [trace, ...rest] = goldenFrames('trace_response');
const frames = [trace, ...goldenFrames('findings'), ...rest];
const debug = () =>
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: { panels: DebugPanel[] } }).__QUERYREPLAY_DEBUG__;

beforeEach(() => {
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: unknown }).__QUERYREPLAY_DEBUG__ = { panels: [] };
});

describe('findings in the replay panel', () => {
  it('shows the most severe finding above the timeline and lists all of them in a tab', () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    expect(screen.getByTestId('qr-strip-finding')).toHaveTextContent('Hash Match (Inner Join) spilled to tempdb');
    expect(screen.getByTestId('qr-strip-open')).toHaveTextContent('4 findings');
    fireEvent.click(screen.getByTestId('qr-tab-findings'));
    const list = screen.getByTestId('qr-findings');
    expect(within(list).getAllByRole('listitem')).toHaveLength(4);
    expect(screen.getByTestId('qr-finding-3')).toHaveTextContent(
      'Clustered Index Scan did 93% of the page reads in the trace'
    );
    expect(screen.getByTestId('qr-finding-3')).toHaveTextContent('2 Clustered Index Scan (dbo.Orders.PK_Orders)');
    expect(screen.getByTestId('qr-finding-numbers-3')).toHaveTextContent('total reads 163 pages');
    expect(screen.getByTestId('qr-finding-confidence-3')).toHaveTextContent('low confidence');
  });

  it('selects the operator, zooms to the evidence and steps through it', async () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    const store = debug().panels[0].store;
    fireEvent.click(screen.getByTestId('qr-strip-open'));
    fireEvent.click(screen.getByTestId('qr-finding-title-3'));
    let s = store.get();
    expect(s.selectedNode).toBe(2);
    expect(s.highlight?.nodes).toEqual([2]);
    expect(s.window.fromUs).toBeGreaterThan(250);
    expect(s.window.toUs).toBeLessThan(400);
    expect(screen.getByTestId('qr-evidence-pos')).toHaveTextContent('evidence 1 of 20 (152 in all)');
    // hint and documentation open with the selected finding
    const link = within(screen.getByTestId('qr-finding-3')).getByText('Documentation').closest('a');
    expect(link).toHaveAttribute(
      'href',
      'https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-index-design-guide'
    );
    fireEvent.click(screen.getByTestId('qr-evidence-next'));
    fireEvent.click(screen.getByTestId('qr-evidence-next'));
    s = store.get();
    expect(s.highlight?.current).toBe(2);
    expect(s.playheadUs).toBe(321);
    expect(screen.getByTestId('qr-strip-evidence-pos')).toHaveTextContent('3/20');
    // the evidence is drawn on the overlay in the theme's selection colour
    await nextFrame();
    const overlay = contextOf(screen.getByTestId('qr-timeline-overlay'));
    const stats = debug().panels[0].stats.layout as { lanes: Array<{ name: string; y: number }> };
    const readY = stats.lanes.find((l) => l.name === 'read')!.y;
    expect(overlay.rects.some((r) => r.y === readY && r.h <= 3)).toBe(true);
  });

  it('selects an evidence event it can resolve, and keys step and clear', () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    const store = debug().panels[0].store;
    fireEvent.click(screen.getByTestId('qr-strip-finding'));
    // the spill's evidence is memory/1: the hash_warning at 450 µs
    expect(store.get().selected).toMatchObject({ lane: 'memory', index: 1, startUs: 450, nodeId: 0 });
    expect(store.get().selectedNode).toBe(0);
    const root = screen.getByTestId('qr-replay');
    fireEvent.keyDown(root, { key: ']' });
    expect(store.get().highlight?.current).toBe(0);
    fireEvent.keyDown(root, { key: 'Escape' });
    expect(store.get().highlight).toBeNull();
    expect(screen.queryByTestId('qr-strip-evidence-pos')).toBeNull();
  });

  it('selects the operators of a finding without evidence events', () => {
    render(<ReplayPanel {...props(frames, 1200, 480)} />);
    const store = debug().panels[0].store;
    fireEvent.click(screen.getByTestId('qr-tab-findings'));
    const before = store.get().window;
    fireEvent.click(screen.getByTestId('qr-finding-title-2')); // events-lost: no evidence in time
    expect(store.get().window).toBe(before);
    expect(screen.getByTestId('qr-evidence-none')).toHaveTextContent('No evidence events');
  });

  it('offers the findings as a view of a 6×8 panel', () => {
    render(<ReplayPanel {...props(frames, 454, 206)} />);
    expect(screen.getByTestId('qr-findings-strip')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId('qr-strip-open'));
    expect(screen.getByTestId('qr-findings')).toBeInTheDocument();
    expect(screen.queryByTestId('qr-timeline')).toBeNull();
  });

  it('shows no strip when the trace has no findings frame', () => {
    render(<ReplayPanel {...props(goldenFrames('trace_response'), 1200, 480)} />);
    expect(screen.queryByTestId('qr-findings-strip')).toBeNull();
    expect(screen.queryByTestId('qr-tab-findings')).toBeNull();
  });
});
