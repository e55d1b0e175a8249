import React from 'react';
import { render, screen } from '@testing-library/react';
import { EventBusSrv, FieldType, LoadingState, PanelProps, getDefaultTimeRange, toDataFrame } from '@grafana/data';
import { ReplayOptions, ReplayPanel } from './ReplayPanel';
import { lanesFromFrames, startedBy, timeSpan } from './replay/lanes';

const laneFrame = toDataFrame({
  name: 'read',
  fields: [
    { name: 'start', type: FieldType.time, values: [3000, 1000, 2000] },
    { name: 'end', type: FieldType.time, values: [3500, 1500, 2500] },
    { name: 'state', type: FieldType.string, values: ['c', 'a', 'b'] },
    { name: 'nodeId', type: FieldType.number, values: [2, null, 1] },
  ],
});
const tableFrame = toDataFrame({ name: 'rows', fields: [{ name: 'x', type: FieldType.number, values: [1] }] });

describe('lane logic', () => {
  it('reads lanes sorted by start and names frames it cannot draw', () => {
    const { lanes, skipped } = lanesFromFrames([laneFrame, tableFrame]);
    expect(skipped).toEqual(['rows']);
    expect(lanes[0].entries.map((e) => e.state)).toEqual(['a', 'b', 'c']);
    expect(lanes[0].entries[0].nodeId).toBeNull();
    expect(timeSpan(lanes)).toEqual({ from: 1000, to: 3500 });
  });

  it.each([
    [999, 0],
    [1000, 1],
    [2999, 2],
    [5000, 3],
  ])('at %d ms, %d events have started', (t, n) => {
    const { lanes } = lanesFromFrames([laneFrame]);
    expect(startedBy(lanes[0], t)).toBe(n);
  });
});

function props(series = [laneFrame, tableFrame]): PanelProps<ReplayOptions> {
  const timeRange = getDefaultTimeRange();
  return {
    id: 1,
    data: { series, state: LoadingState.Done, timeRange },
    timeRange,
    timeZone: 'utc',
    options: { showSkipped: true },
    transparent: false,
    width: 400,
    height: 300,
    fieldConfig: { defaults: {}, overrides: [] },
    renderCounter: 0,
    title: 'Replay',
    eventBus: new EventBusSrv(),
    onOptionsChange: jest.fn(),
    onFieldConfigChange: jest.fn(),
    replaceVariables: (s: string) => s,
    onChangeTimeRange: jest.fn(),
  } as unknown as PanelProps<ReplayOptions>;
}

describe('ReplayPanel', () => {
  it('renders every lane at the end of the trace', () => {
    render(<ReplayPanel {...props()} />);
    expect(screen.getByTestId('qr-lane-read')).toHaveTextContent('3 / 3');
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('2500.000 ms');
    expect(screen.getByTestId('qr-skipped')).toHaveTextContent('rows');
  });

  it('says so when there is nothing to replay', () => {
    render(<ReplayPanel {...props([tableFrame])} />);
    expect(screen.getByTestId('qr-replay-empty')).toHaveTextContent('Nothing to replay');
  });
});
