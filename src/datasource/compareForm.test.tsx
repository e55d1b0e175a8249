import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { CompareForm } from './components/CompareForm';
import { ReplayQuery } from './types';

// Combobox's menu is virtualised and measures itself, which jsdom cannot do: here it is a native select
// with the same options and callback
jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  Combobox: (p: {
    'data-testid': string;
    value: string | null;
    options: Array<{ value: string; label: string; description?: string }>;
    onChange: (o: { value: string }) => void;
  }) => (
    <select
      data-testid={p['data-testid']}
      value={p.value ?? ''}
      onChange={(e) => p.onChange({ value: e.target.value })}
    >
      <option value="" />
      {p.options.map((o) => (
        <option key={o.value} value={o.value} title={o.description}>
          {o.label}
        </option>
      ))}
    </select>
  ),
}));

const A = '0190d5c2a0e87c3b9a51e2f4c6d8b0a1';
const B = '0190d5c2a0e87c3b9a51e2f4c6d8b0a2';
const traces = [
  {
    traceId: A,
    statement: 'SELECT … WITH (INDEX(PK_Orders))',
    database: 'QueryReplayDemo',
    startedAt: '2026-11-29T12:00:00Z',
    events: 140,
    durationUs: 7700,
    bytes: 4096,
  },
  {
    traceId: B,
    statement: 'SELECT … WHERE o.CustomerID = 42',
    database: 'QueryReplayDemo',
    startedAt: '2026-11-29T12:01:00Z',
    events: 90,
    durationUs: 19000,
    bytes: 8192,
  },
];

function form(query: Partial<ReplayQuery>, list: typeof traces | null = traces) {
  const onChange = jest.fn();
  render(<CompareForm query={{ refId: 'A', queryType: 'compare', ...query }} traces={list} onChange={onChange} />);
  return onChange;
}

describe('CompareForm', () => {
  it('picks A and B from the saved traces', () => {
    const onChange = form({});
    expect(screen.getByTestId('qr-compare-help')).toHaveTextContent('Pick two traces');
    const a = screen.getByTestId('qr-compare-a');
    expect(a).toHaveTextContent('SELECT … WITH (INDEX(PK_Orders))');
    expect(screen.getAllByTitle(`QueryReplayDemo · 140 events · 7.7 ms · ${A}`)).toHaveLength(2);
    fireEvent.change(a, { target: { value: A } });
    expect(onChange.mock.lastCall[0]).toMatchObject({ queryType: 'compare', traceIds: [A, ''] });
  });

  it('keeps A when B is picked', () => {
    const onChange = form({ traceIds: [A] });
    fireEvent.change(screen.getByTestId('qr-compare-b'), { target: { value: B } });
    expect(onChange.mock.lastCall[0].traceIds).toEqual([A, B]);
  });

  it('swaps A and B', () => {
    const onChange = form({ traceIds: [A, B] });
    expect(screen.getByTestId('qr-compare-help')).toHaveTextContent('matched by plan shape');
    fireEvent.click(screen.getByLabelText('Swap A and B'));
    expect(onChange.mock.lastCall[0].traceIds).toEqual([B, A]);
  });

  it('says what is wrong with the pair', () => {
    form({ traceIds: [A, A] });
    expect(screen.getByTestId('qr-compare-help')).toHaveTextContent('the same trace');
  });

  it('says what is wrong with a pasted id', () => {
    form({ traceIds: [A, 'not-an-id'] }, []);
    expect(screen.getByTestId('qr-compare-help')).toHaveTextContent('32 lower-case hex digits');
  });
});
