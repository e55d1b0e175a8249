import React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { ReplayPanel } from './ReplayPanel';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { contextOf, installFakeCanvas } from './testing/fakeCanvas';
import { animationFrames, nextFrame } from './testing/frames';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

const frames = goldenFrames('trace_response');

describe('ReplayPanel', () => {
  it('says what is missing when the frames are not a trace', () => {
    render(<ReplayPanel {...props([])} />);
    expect(screen.getByTestId('qr-replay-empty')).toHaveTextContent('Nothing to replay');
    expect(screen.getByTestId('qr-replay-empty')).toHaveTextContent('no frames');
  });

  it('draws the lanes and the plan on canvases, with the plan tree beside them', async () => {
    render(<ReplayPanel {...props(frames)} />);
    await nextFrame();
    expect(screen.getByTestId('qr-replay')).toHaveAttribute('data-trace-id', '0190d5c2a0e87c3b9a51e2f4c6d8b0a1');
    const base = contextOf(screen.getByTestId('qr-timeline-base'));
    // lane labels and operator labels are drawn text, not DOM elements
    expect(base.texts).toEqual(expect.arrayContaining(['Read 4', 'Lock 2', '0 Hash Match']));
    expect(screen.getByTestId('qr-plan-tree')).toBeInTheDocument();
    expect(screen.getByTestId('qr-plan-node-2')).toHaveAttribute('data-status', 'pending');
  });

  it('names every operator with its table, on the canvas and in full on hover in the plan tree', async () => {
    render(<ReplayPanel {...props(frames)} width={1600} height={600} />);
    await nextFrame();
    const base = contextOf(screen.getByTestId('qr-timeline-base'));
    const ops = (await import('./model/trace')).traceFromFrames(frames).trace!.operators.filter((o) => o.object);
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) {
      const table = op.object.replace(/[[\]]/g, '').split('.')[1];
      expect(base.texts.some((t) => t.startsWith(`${op.nodeId} `) && t.includes(table))).toBe(true);
      expect(screen.getByTestId(`qr-plan-node-${op.nodeId}`).getAttribute('title')).toContain(op.object);
      expect(screen.getByTestId(`qr-plan-node-${op.nodeId}`).getAttribute('title')).toContain(op.name);
    }
    expect(base.texts.filter((t) => /^\d+ /.test(t) && t.endsWith('…'))).toEqual([]);
  });

  it('steps to the next event and shows it in the event view', async () => {
    render(<ReplayPanel {...props(frames)} />);
    fireEvent.click(screen.getByTestId('qr-step-next'));
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('15 µs');
    fireEvent.click(screen.getByTestId('qr-step-next'));
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('28 µs');
    fireEvent.click(screen.getByTestId('qr-tab-stack'));
    expect(screen.getByTestId('qr-selected')).toHaveTextContent('Lock: S');
    expect(screen.getByTestId('qr-selected')).toHaveTextContent('object (strong confidence)');
    fireEvent.click(screen.getByTestId('qr-step-back'));
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('15 µs');
  });

  it("shows the selected event's own call stack with badges, infrastructure collapsed", async () => {
    render(<ReplayPanel {...props(frames)} />);
    fireEvent.click(screen.getByTestId('qr-step-next'));
    fireEvent.click(screen.getByTestId('qr-step-next')); // the S lock at 28 µs: stack 2
    fireEvent.click(screen.getByTestId('qr-tab-stack'));
    const own = screen.getByTestId('qr-event-stack');
    const lines = screen.getAllByTestId('qr-stack-frame');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toHaveTextContent('sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a');
    expect(lines[0]).toHaveTextContent('Storage Engine');
    expect(lines[0]).toHaveTextContent('Dataset');
    expect(own).toHaveTextContent('⋯ 2 infrastructure frames');
    fireEvent.click(within(own).getByText('⋯ 2 infrastructure frames'));
    expect(screen.getAllByTestId('qr-stack-frame').map((l) => l.textContent)).toEqual([
      expect.stringContaining('GetNextRowValuesInternal'),
      expect.stringContaining('sqldk!SOS_Task::Param::Execute+0x1f'),
      expect.stringContaining('ntdll+0x4b0'),
    ]);
    // the next event, a page read, has its own stack (1)
    fireEvent.click(screen.getByTestId('qr-step-next'));
    expect(screen.getByTestId('qr-selected')).toHaveTextContent('Read');
    expect(screen.getAllByTestId('qr-stack-frame')[0]).toHaveTextContent('sqlmin!BPool::Get+0x10');
  });

  it('shows the trace’s one elapsed time, and its reads by kind on hover', () => {
    render(<ReplayPanel {...props(frames)} />);
    const facts = screen.getByTestId('qr-trace-facts');
    expect(facts).toHaveTextContent(/^elapsed 0\.9 ms$/);
    // the details of the selected operator name each kind of read
    const details = screen.getByTestId('qr-operator-details');
    expect(details).toHaveTextContent('page reads (trace)');
  });

  it('moves the plan tree with the playhead', async () => {
    render(<ReplayPanel {...props(frames)} />);
    const root = screen.getByTestId('qr-replay');
    for (let i = 0; i < 6; i++) {
      fireEvent.keyDown(root, { key: 'ArrowRight' });
    }
    // six steps: 15, 28, 30, 35, 40, 320 → scan 2 has started and read one page
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('320 µs');
    expect(screen.getByTestId('qr-plan-node-2')).toHaveAttribute('data-status', 'active');
    expect(screen.getByTestId('qr-plan-reads-2')).toHaveTextContent('1/2 page reads');
    expect(screen.getByTestId('qr-plan-phase-0')).toHaveTextContent('probing');
  });

  it('filters every lane to a clicked operator and clears with Escape', async () => {
    render(<ReplayPanel {...props(frames)} />);
    await nextFrame();
    const base = contextOf(screen.getByTestId('qr-timeline-base'));
    const before = base.rects.length;
    fireEvent.click(screen.getByTestId('qr-plan-node-2'));
    expect(screen.getByTestId('qr-filter')).toHaveTextContent('2 Clustered Index Scan');
    await nextFrame();
    expect(base.rects.length).toBeLessThan(before);
    fireEvent.keyDown(screen.getByTestId('qr-replay'), { key: 'Escape' });
    expect(screen.queryByTestId('qr-filter')).toBeNull();
  });

  it('plays and pauses with the space bar', async () => {
    render(<ReplayPanel {...props(frames)} />);
    const root = screen.getByTestId('qr-replay');
    fireEvent.keyDown(root, { key: ' ' });
    // one frame starts playback, the next moves the playhead
    await animationFrames(2);
    fireEvent.keyDown(root, { key: ' ' });
    const text = screen.getByTestId('qr-playhead').textContent ?? '';
    expect(parseFloat(text)).toBeGreaterThan(0);
  });

  it('shows one view at a time in a 6×8 grid panel', async () => {
    render(<ReplayPanel {...props(frames, 470, 210)} />);
    expect(screen.getByTestId('qr-timeline')).toBeInTheDocument();
    expect(screen.queryByTestId('qr-linked')).toBeNull();
    expect(screen.getByTestId('qr-view')).toBeInTheDocument();
  });

  it('hides lanes the options leave out', async () => {
    render(<ReplayPanel {...props(frames, 1000, 420, { lanes: ['plan', 'read'] })} />);
    await nextFrame();
    const base = contextOf(screen.getByTestId('qr-timeline-base'));
    expect(base.texts).toContain('Read 4');
    expect(base.texts).not.toContain('Lock 2');
  });
});
