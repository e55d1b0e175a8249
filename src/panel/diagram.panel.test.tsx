import React from 'react';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { ReplayPanel } from './ReplayPanel';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';
import { debugRoot } from './replay/debug';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

beforeEach(() => {
  // the panel registers its store here (the handle the browser tests read)
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: unknown }).__QUERYREPLAY_DEBUG__ = { panels: [] };
});

const frames = goldenFrames('trace_response');

/** The store of the panel just rendered (the debug handle the browser tests read). */
function store() {
  const root = debugRoot();
  if (!root || root.panels.length === 0) {
    throw new Error('no debug handle');
  }
  return root.panels[root.panels.length - 1].store;
}

// golden trace: hash join 0 builds 10-300, probes 300-880 (first row out at 400); scan 1 emits 25-290
describe('the plan diagram view', () => {
  it('draws every operator with its name, object and figures, and an arrow per child', async () => {
    render(<ReplayPanel {...props(frames, 1600, 600, { linkedView: 'diagram' })} />);
    await nextFrame();
    expect(screen.getByTestId('qr-plan-diagram')).toBeInTheDocument();
    expect(screen.getByTestId('qr-diagram-name-0')).toHaveTextContent('Hash Match');
    expect(screen.getByTestId('qr-diagram-object-1')).toHaveTextContent('Customers.PK_Customers');
    expect(screen.getByTestId('qr-diagram-object-2')).toHaveTextContent('Orders.PK_Orders');
    expect(screen.getByTestId('qr-diagram-node-1').getAttribute('title')).toContain('[dbo].[Customers].[PK_Customers]');
    expect(screen.getByTestId('qr-diagram-rows-0')).toHaveTextContent('/ 12');
    expect(screen.getByTestId('qr-diagram-rows-0')).toHaveTextContent('est 10');
    expect(screen.getByTestId('qr-diagram-reads-1')).toHaveTextContent('logical 3 · physical 1');
    expect(screen.getByTestId('qr-diagram-edge-1')).toBeInTheDocument();
    expect(screen.getByTestId('qr-diagram-edge-2')).toBeInTheDocument();
  });

  it('follows the playhead: states and rows so far change', async () => {
    render(<ReplayPanel {...props(frames, 1600, 600, { linkedView: 'diagram' })} />);
    await nextFrame();
    // the figures follow the playhead at 15 Hz: wait (bounded) until the plane shows the time
    const moveTo = async (us: number) => {
      act(() => store().set({ playheadUs: us }));
      await waitFor(() => expect(screen.getByTestId('qr-diagram-plane')).toHaveAttribute('data-playhead', String(us)), {
        timeout: 2000,
      });
    };
    await moveTo(100);
    expect(screen.getByTestId('qr-diagram-node-0')).toHaveAttribute('data-state', 'building');
    expect(screen.getByTestId('qr-diagram-node-1')).toHaveAttribute('data-state', 'emitting');
    expect(screen.getByTestId('qr-diagram-rows-0')).toHaveTextContent('rows ≈0 / 12');
    await moveTo(640);
    expect(screen.getByTestId('qr-diagram-node-0')).toHaveAttribute('data-state', 'probing');
    expect(screen.getByTestId('qr-diagram-node-1')).toHaveAttribute('data-state', 'done');
    expect(screen.getByTestId('qr-diagram-rows-0')).toHaveTextContent('rows ≈6 / 12');
    await moveTo(2000);
    expect(screen.getByTestId('qr-diagram-node-0')).toHaveAttribute('data-state', 'done');
  });

  it('filters the lanes on a click and outlines the selected event’s operator', async () => {
    render(<ReplayPanel {...props(frames, 1600, 600, { linkedView: 'diagram' })} />);
    await nextFrame();
    fireEvent.click(screen.getByTestId('qr-diagram-node-2'));
    expect(store().get()).toMatchObject({ filterNode: 2, selectedNode: 2 });
    fireEvent.click(screen.getByTestId('qr-diagram-node-2'));
    expect(store().get().filterNode).toBeNull();
    act(() => store().set({ selectedNode: 1 }));
    expect(screen.getByTestId('qr-diagram-node-1')).toHaveAttribute('data-selected', 'true');
    expect(screen.getByTestId('qr-diagram-node-2')).toHaveAttribute('data-selected', 'false');
  });

  it('collapses a subtree and zooms with the buttons', async () => {
    render(<ReplayPanel {...props(frames, 1600, 600, { linkedView: 'diagram' })} />);
    await nextFrame();
    fireEvent.click(screen.getByTestId('qr-diagram-toggle-0'));
    expect(screen.queryByTestId('qr-diagram-node-1')).toBeNull();
    expect(screen.getByTestId('qr-diagram-toggle-0')).toHaveTextContent('+2');
    fireEvent.click(screen.getByTestId('qr-diagram-toggle-0'));
    expect(screen.getByTestId('qr-diagram-node-1')).toBeInTheDocument();
    const zoom = () => Number(screen.getByTestId('qr-diagram-view').getAttribute('data-zoom'));
    const z0 = zoom();
    fireEvent.click(screen.getByTestId('qr-diagram-zoom-in'));
    expect(zoom()).toBeGreaterThan(z0);
    fireEvent.click(screen.getByTestId('qr-diagram-zoom-out'));
    fireEvent.click(screen.getByTestId('qr-diagram-zoom-out'));
    expect(zoom()).toBeLessThan(z0);
  });
});
