import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { LoadingState, PanelData, dateTime, toDataFrame } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { OutputPicker, timeBaseOf } from './components/query/OutputPicker';
import { ReplayQuery } from './types';

function panelData(timeBase?: { fromMs: number; toMs: number }): PanelData {
  const f = toDataFrame({ name: 'lane_read', fields: [] });
  f.meta = { custom: timeBase ? { traceId: 'x', timeBase } : { traceId: 'x' } };
  const now = dateTime();
  return { state: LoadingState.Done, series: [f], timeRange: { from: now, to: now, raw: { from: now, to: now } } };
}

describe('OutputPicker', () => {
  const base: ReplayQuery = { refId: 'A', queryType: 'bundle', traceId: '0190d5c2a0e87c3b9a51e2f4c6d8b0a1' };

  it('asks for the output of the panel chosen, and for all frames again', () => {
    const onChange = jest.fn();
    const { rerender } = render(<OutputPicker query={base} onChange={onChange} />);
    fireEvent.click(screen.getByLabelText('Call stacks'));
    expect(onChange).toHaveBeenLastCalledWith({ ...base, output: 'flameGraph' });
    for (const [label, output] of [
      ['Plan', 'nodeGraph'],
      ['Phases and lanes', 'stateTimeline'],
      ['Operators', 'table'],
    ]) {
      fireEvent.click(screen.getByLabelText(label));
      expect(onChange).toHaveBeenLastCalledWith({ ...base, output });
    }
    rerender(<OutputPicker query={{ ...base, output: 'table' }} onChange={onChange} />);
    fireEvent.click(screen.getByLabelText('All frames'));
    expect(onChange).toHaveBeenLastCalledWith({ ...base, output: undefined });
  });

  it('fits the dashboard time range to a State Timeline response', () => {
    const partial = jest.spyOn(locationService, 'partial').mockImplementation(() => undefined);
    render(
      <OutputPicker
        query={{ ...base, output: 'stateTimeline' }}
        data={panelData({ fromMs: 0, toMs: 47213 })}
        onChange={jest.fn()}
      />
    );
    expect(screen.getByTestId('qr-output-scaled').textContent).toContain('1 ms into the trace');
    fireEvent.click(screen.getByText('Fit time range to the trace'));
    expect(partial).toHaveBeenCalledWith({ from: '0', to: '47213' }, true);
    partial.mockRestore();
  });

  it('offers no fit before the response has a time base', () => {
    render(<OutputPicker query={{ ...base, output: 'stateTimeline' }} data={panelData()} onChange={jest.fn()} />);
    expect(screen.queryByText('Fit time range to the trace')).toBeNull();
    expect(timeBaseOf(undefined)).toBeNull();
  });
});
