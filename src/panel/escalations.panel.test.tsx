import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { createTheme } from '@grafana/data';
import { ReplayPanel } from './ReplayPanel';
import { escalationsFrame, goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { contextOf, installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';
import { paletteFromTheme } from './render/palette';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

// jsdom has no PointerEvent: without one the pointer's position is lost on the way to React
class TestPointerEvent extends MouseEvent {
  pointerId: number;
  constructor(type: string, init: PointerEventInit = {}) {
    super(type, init);
    this.pointerId = init.pointerId ?? 0;
  }
}
(window as unknown as { PointerEvent: unknown }).PointerEvent ??= TestPointerEvent;

const golden = goldenFrames('trace_response');
const escalation = (atUs: number) =>
  golden.concat(escalationsFrame([{ t: atUs, mode: 'X', object: '[dbo].[Orders]', locks: 6250 }]));
const palette = paletteFromTheme(createTheme({ colors: { mode: 'dark' } }));

/** The escalation marks drawn on the base canvas: rules in the escalation colour. */
function marks() {
  return contextOf(screen.getByTestId('qr-timeline-base')).rects.filter((r) => r.fill === palette.escalation);
}

describe('lock escalations in the timeline', () => {
  it('draws each escalation as a mark on the Lock lane, with a legend entry', async () => {
    render(<ReplayPanel {...props(escalation(30))} width={1400} height={600} />);
    await nextFrame();
    expect(marks()).toHaveLength(1);
    expect(screen.getByTestId('qr-legend-escalation')).toHaveTextContent('lock escalation');
  });

  it('draws no mark and no legend entry for a trace without escalations', async () => {
    render(<ReplayPanel {...props(golden)} width={1400} height={600} />);
    await nextFrame();
    expect(marks()).toHaveLength(0);
    expect(screen.queryByTestId('qr-legend-escalation')).toBeNull();
  });

  it('shows mode, object and the locks before escalation on hover, and moves the playhead there on click', async () => {
    render(<ReplayPanel {...props(escalation(30))} width={1400} height={600} />);
    await nextFrame();
    const [m] = marks();
    const overlay = screen.getByTestId('qr-timeline-overlay');
    const at = { clientX: m.x + 1, clientY: m.y + m.h / 2, button: 0, pointerId: 1 };
    fireEvent.pointerMove(overlay, at);
    const tip = screen.getByTestId('qr-tooltip');
    expect(tip).toHaveTextContent('Lock escalation');
    expect(tip).toHaveTextContent('X on OBJECT');
    expect(tip).toHaveTextContent('[dbo].[Orders]');
    expect(tip).toHaveTextContent('6,250');
    fireEvent.pointerDown(overlay, at);
    fireEvent.pointerUp(overlay, at);
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('30 µs');
  });
});
