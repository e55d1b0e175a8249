import React from 'react';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DataFrame } from '@grafana/data';
import { ReplayPanel } from './ReplayPanel';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { installFakeCanvas } from './testing/fakeCanvas';
import { N, statementsFrame } from './testing/statements';
import { fetchStatement } from './detailSource';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));
jest.mock('./detailSource', () => ({
  ...jest.requireActual('./detailSource'),
  fetchStatement: jest.fn(),
}));

installFakeCanvas();

// procedure_nested's tree: the batch, EXEC dbo.RegionReport, its SELECT, its
// EXEC dbo.CustomerOrders and that procedure's SELECT
const nodes: N[] = [
  { id: 0, parentId: -1, kind: 'batch', text: 'EXEC dbo.RegionReport', endUs: 900 },
  { id: 1, parentId: 0, text: 'EXEC dbo.RegionReport', startUs: 10, endUs: 890 },
  {
    id: 2,
    parentId: 1,
    text: 'SELECT 1 AS a',
    objectName: 'dbo.RegionReport',
    startUs: 20,
    endUs: 300,
    hasPlan: true,
    logicalReads: 3,
  },
  { id: 3, parentId: 1, text: 'EXEC dbo.CustomerOrders', objectName: 'dbo.RegionReport', startUs: 310, endUs: 880 },
  {
    id: 4,
    parentId: 3,
    text: 'SELECT 2 AS b',
    objectName: 'dbo.CustomerOrders',
    startUs: 320,
    endUs: 870,
    hasPlan: true,
    logicalReads: 7,
  },
];

/** The golden trace's frames as one statement of the tree draws them: its text and its own operators' names. */
function framesOf(statementId: number, text: string, opName: string): DataFrame[] {
  return goldenFrames('trace_response')
    .map((f) => {
      if (f.name === 'trace') {
        const s = f.fields.find((x) => x.name === 'statement')!;
        return { ...f, fields: f.fields.map((x) => (x === s ? { ...s, values: [text] } : x)) };
      }
      if (f.name === 'operators') {
        const op = f.fields.find((x) => x.name === 'physicalOp')!;
        return { ...f, fields: f.fields.map((x) => (x === op ? { ...op, values: op.values.map(() => opName) } : x)) };
      }
      return f;
    })
    .concat(statementsFrame(nodes, statementId));
}

const request = { targets: [{ refId: 'A', datasource: { uid: 'qr', type: 'queryreplay-sqlserver-datasource' } }] };

describe('the statement tree', () => {
  it('lists batch → statements → nested procedure statements with their figures', () => {
    render(<ReplayPanel {...props(framesOf(2, 'SELECT 1 AS a', 'First Scan'), 1600, 600, {}, request)} />);
    fireEvent.click(screen.getByTestId('qr-tab-statements'));
    const rows = screen.getByTestId('qr-statements').querySelectorAll('tbody tr');
    expect(Array.from(rows).map((r) => r.querySelector('td')!.textContent)).toEqual([
      'Batch',
      'EXEC dbo.RegionReport',
      'dbo.RegionReport: SELECT 1 AS a',
      'dbo.RegionReport: EXEC dbo.CustomerOrders',
      'dbo.CustomerOrders: SELECT 2 AS b',
    ]);
    // nested deeper, indented further
    const pad = (id: number) =>
      parseInt(screen.getByTestId(`qr-statement-${id}`).querySelector('td')!.style.paddingLeft, 10);
    expect(pad(4)).toBeGreaterThan(pad(3));
    expect(pad(3)).toBeGreaterThan(pad(1));
    expect(screen.getByTestId('qr-statement-4')).toHaveTextContent('0.6 ms');
    expect(screen.getByTestId('qr-statement-4')).toHaveTextContent('7');
    expect(screen.getByTestId('qr-statement-2')).toHaveAttribute('data-current', 'true');
    // the timeline's statement boundaries: one band per statement
    expect(screen.getByTestId('qr-statement-bands').children).toHaveLength(4);
  });

  it('picking the nested statement replays its own frames', async () => {
    const fetch = fetchStatement as jest.Mock;
    fetch.mockResolvedValue(framesOf(4, 'SELECT 2 AS b', 'Picked Seek'));
    render(<ReplayPanel {...props(framesOf(2, 'SELECT 1 AS a', 'First Scan'), 1600, 600, {}, request)} />);
    expect(screen.getByTestId('qr-header-sql')).toHaveTextContent('SELECT 1 AS a');
    fireEvent.click(screen.getByTestId('qr-tab-statements'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('qr-statement-4'));
    });
    expect(fetch).toHaveBeenCalledWith({ uid: 'qr', type: 'queryreplay-sqlserver-datasource' }, expect.any(String), 4);
    await waitFor(() => expect(screen.getByTestId('qr-header-sql')).toHaveTextContent('SELECT 2 AS b'));
    fireEvent.click(screen.getByTestId('qr-tab-plan'));
    expect(screen.getAllByText(/Picked Seek/).length).toBeGreaterThan(0);
    expect(screen.queryByText(/First Scan/)).toBeNull();
    fireEvent.click(screen.getByTestId('qr-tab-statements'));
    expect(screen.getByTestId('qr-statement-4')).toHaveAttribute('data-current', 'true');
  });

  // issue 30 review: a picked statement's header showed the batch's text and
  // "unknown" reads; the backend's own frames for statement 2 (Go golden)
  // carry its text, elapsed, rows, reads, CPU and findings, and the header
  // and the findings strip show them
  it("shows the picked statement's own text, figures and findings", async () => {
    const fetch = fetchStatement as jest.Mock;
    fetch.mockResolvedValue(goldenFrames('statement_response'));
    render(<ReplayPanel {...props(framesOf(1, 'SELECT 1 AS a', 'First Scan'), 1600, 600, {}, request)} />);
    fireEvent.click(screen.getByTestId('qr-tab-statements'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('qr-statement-2'));
    });
    await waitFor(() =>
      expect(screen.getByTestId('qr-header-sql')).toHaveTextContent('SELECT o.OrderID FROM dbo.Orders AS o')
    );
    expect(screen.getByTestId('qr-fact-elapsed')).toHaveTextContent('0.6 ms');
    expect(screen.getByTestId('qr-fact-rows')).toHaveTextContent('4');
    expect(screen.getByTestId('qr-fact-logical')).toHaveTextContent('logical reads 7');
    expect(screen.getByTestId('qr-fact-physical')).toHaveTextContent('physical reads 2');
    expect(screen.getByTestId('qr-fact-cpu')).toHaveTextContent('CPU 3 ms');
    expect(screen.getByTestId('qr-header')).not.toHaveTextContent(/unknown/);
    expect(screen.getByTestId('qr-findings-strip')).toHaveTextContent(/spilled to tempdb/);
  });
});
