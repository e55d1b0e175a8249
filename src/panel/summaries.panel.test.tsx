import React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { ReplayPanel } from './ReplayPanel';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';
import { PHASE_KEYS } from './render/legend';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

const frames = goldenFrames('trace_response');

// Issue 28: the SQL text, elapsed time and row count appeared nowhere; no
// Table I/O or Wait Stats; no legend for the phases' fills.
describe('the query in view, its summaries and legends', () => {
  it('shows the statement and its facts in the header', async () => {
    render(<ReplayPanel {...props(frames)} width={1600} height={600} />);
    await nextFrame();
    const h = screen.getByTestId('qr-header');
    expect(within(h).getByTestId('qr-header-sql')).toHaveTextContent('SELECT c.Name, o.OrderID FROM dbo.Customers');
    expect(within(h).getByTestId('qr-header-sql')).toHaveAttribute('title', expect.stringContaining('JOIN dbo.Orders'));
    expect(h).toHaveTextContent('QueryReplayDemo · SQL Server 14.0.3192.2');
    expect(screen.getByTestId('qr-fact-rows')).toHaveTextContent('rows 12 rows');
    expect(screen.getByTestId('qr-fact-logical')).toHaveTextContent('logical reads 3');
    expect(screen.getByTestId('qr-fact-physical')).toHaveTextContent('physical reads 1');
    expect(screen.getByTestId('qr-fact-readahead')).toHaveTextContent('read-ahead reads 2');
    expect(screen.getByTestId('qr-fact-cpu')).toHaveTextContent('CPU 7 ms');
    expect(screen.getByTestId('qr-fact-waits')).toHaveTextContent('waited 0.15 ms');
    expect(screen.getByTestId('qr-fact-topwaits')).toHaveTextContent('PAGEIOLATCH_SH 0.10 ms, CXPACKET 0.05 ms');
    expect(screen.getByTestId('qr-fact-options')).toHaveTextContent('warm cache, modification rolled back');
    expect(screen.getByTestId('qr-fact-warnings')).toHaveTextContent('1 warning');
    fireEvent.click(screen.getByTestId('qr-header-expand'));
    expect(screen.getByTestId('qr-header-statement')).toHaveTextContent('sample warning');
  });

  it('lists Table I/O and Wait Stats, each linked to the timeline', async () => {
    render(<ReplayPanel {...props(frames)} width={1600} height={600} />);
    fireEvent.click(screen.getByTestId('qr-tab-summary'));
    const rows = screen.getAllByTestId('qr-table-io-row');
    expect(rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent))).toEqual([
      ['CustomersPK_Customers', '3', '1', '2', '1', '1', '1'],
      ['OrdersPK_Orders', '—', '—', '—', '—', '2', '1'],
    ]);
    expect(screen.getAllByTestId('qr-wait-class').map((r) => r.textContent)).toEqual([
      'Buffer IO110067%',
      'Parallelism15033%',
    ]);
    fireEvent.click(rows[1]);
    // the lanes now show only operator 2's events: the Orders row is picked
    expect(rows[1].className).not.toBe(rows[0].className);
    fireEvent.click(screen.getAllByTestId('qr-wait-type')[1]);
    expect(screen.getByTestId('qr-playhead')).toHaveTextContent('850');
  });

  it('draws a legend for every phase fill in the terminal words', () => {
    render(<ReplayPanel {...props(frames)} width={1600} height={600} />);
    const legend = screen.getByTestId('qr-phase-legend');
    for (const k of PHASE_KEYS) {
      expect(legend).toHaveTextContent(k.label);
    }
  });
});

describe('tab names in a narrow side panel', () => {
  it('shortens long tab names, keeping the full name as hover text', () => {
    render(<ReplayPanel {...props(frames)} width={1000} height={420} />);
    expect(screen.getByTestId('qr-tab-stack')).toHaveTextContent(/^Stack$/);
    expect(screen.getByTestId('qr-tab-stack')).toHaveAttribute('title', 'Event & stack');
    expect(screen.getByTestId('qr-tab-summary')).toHaveAttribute('title', 'I/O & waits');
  });
});
