import React from 'react';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryEditor } from './components/QueryEditor';
import { ReplayDataSource } from './datasource';
import { HealthReport, coldCacheGate, readAheadGate } from './health';
import { ReplayDataSourceOptions, ReplayQuery } from './types';
import { installFakeCanvas } from '../panel/testing/fakeCanvas';

// Combobox measures its options' text on a canvas
installFakeCanvas();

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ get: jest.fn(), delete: jest.fn() }),
  getTemplateSrv: () => ({ replace: (s: string) => s }),
}));
jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  CodeEditor: () => <textarea data-testid="code-editor" />,
}));

// What pkg/plugin's health answers (TestHealthNamesEachPersona): persona from EngineEdition, IS_SRVROLEMEMBER('sysadmin').
const box = (sysadmin: boolean): HealthReport => ({ ok: true, message: 'connected', persona: 'box', sysadmin });
const azure: HealthReport = { ok: true, message: 'connected', persona: 'azure-sql-database', sysadmin: false };
const mi: HealthReport = { ok: true, message: 'connected', persona: 'managed-instance', sysadmin: true };
const unreachable: HealthReport = {
  ok: false,
  message: 'cannot connect to SQL Server at db1:1433: timeout',
  sysadmin: false,
};

function datasource(jsonData: ReplayDataSourceOptions, health: () => Promise<HealthReport>) {
  const ds = new ReplayDataSource({ uid: 'qr', jsonData, meta: { id: 'queryreplay-sqlserver-datasource' } } as never);
  ds.getResource = jest.fn(async (path: string) => (path === 'health' ? health() : [])) as never;
  return ds;
}

async function editor(query: Partial<ReplayQuery>, ds: ReplayDataSource) {
  const onChange = jest.fn();
  render(<QueryEditor query={{ refId: 'A', ...query }} datasource={ds} onChange={onChange} onRunQuery={jest.fn()} />);
  await waitFor(() => expect(ds.getResource).toHaveBeenCalledWith('health'));
  await act(async () => undefined);
  return onChange;
}

const readAheadSwitch = () => document.getElementById('qr-noreadahead') as HTMLInputElement;

describe('readAheadGate and coldCacheGate (the tracer rules, from the health report)', () => {
  it.each([
    ['a sysadmin on SQL Server', box(true), true, ''],
    ['a login without sysadmin', box(false), false, 'needs the sysadmin role'],
    ['Azure SQL Database', azure, false, 'Azure SQL Database does not support trace flags'],
    ['Managed Instance, even as sysadmin', mi, false, 'Managed Instance does not support session trace flag 652'],
    ['no report yet', null, true, ''],
    ['a server the check could not reach', unreachable, true, ''],
  ])('read-ahead: %s', (_, h, allowed, reason) => {
    const g = readAheadGate(h);
    expect(g.allowed).toBe(allowed);
    expect(g.reason).toContain(reason);
  });

  it.each([
    ['settings off', {}, box(true), false, 'allowBufferPoolClear is off'],
    ['a sysadmin on SQL Server', { allowBufferPoolClear: true }, box(true), true, ''],
    ['Managed Instance as sysadmin', { allowBufferPoolClear: true }, mi, true, ''],
    ['Azure SQL Database', { allowBufferPoolClear: true }, azure, false, 'no DBCC DROPCLEANBUFFERS'],
    ['a login without sysadmin', { allowBufferPoolClear: true }, box(false), false, 'needs the sysadmin role'],
  ])('cold cache: %s', (_, settings, h, allowed, reason) => {
    const g = coldCacheGate(settings as ReplayDataSourceOptions, h);
    expect(g.allowed).toBe(allowed);
    expect(g.reason).toContain(reason);
  });
});

describe('QueryEditor trace options the server refuses', () => {
  it('offers "No read-ahead" to a sysadmin on SQL Server', async () => {
    const onChange = await editor(
      {},
      datasource({}, async () => box(true))
    );
    expect(readAheadSwitch()).not.toBeDisabled();
    fireEvent.click(readAheadSwitch());
    expect(onChange.mock.lastCall[0].options.disableReadAhead).toBe(true);
    expect(screen.queryByTestId('qr-noreadahead-refused')).toBeNull();
  });

  it.each([
    ['Azure SQL Database', azure, /Azure SQL Database does not support trace flags/],
    ['Managed Instance', mi, /Managed Instance does not support session trace flag 652/],
    ['a login without sysadmin', box(false), /needs the sysadmin role/],
  ])('disables "No read-ahead" on %s and says why in its tooltip', async (_, h, why) => {
    const onChange = await editor(
      {},
      datasource({}, async () => h)
    );
    await waitFor(() => expect(readAheadSwitch()).toBeDisabled());
    expect(screen.getByTestId('qr-noreadahead-refused')).toHaveTextContent('not available here');
    // the tooltip on the disabled switch gives the reason
    fireEvent.focus(screen.getByTestId('qr-noreadahead-why'));
    expect(await screen.findByText(new RegExp(`Not available: .*${why.source}`))).toBeInTheDocument();
    fireEvent.click(readAheadSwitch());
    expect(onChange).not.toHaveBeenCalled();
  });

  it('lets a query that already asks for no read-ahead turn it off, saying it would be refused', async () => {
    const onChange = await editor(
      { options: { disableReadAhead: true } },
      datasource({}, async () => azure)
    );
    await waitFor(() => expect(screen.getByTestId('qr-noreadahead-refused')).toHaveTextContent('refused:'));
    expect(readAheadSwitch()).not.toBeDisabled();
    fireEvent.click(readAheadSwitch());
    expect(onChange.mock.lastCall[0].options.disableReadAhead).toBe(false);
  });

  it('keeps offering it while the health check cannot reach the server (the trace names the problem)', async () => {
    await editor(
      {},
      datasource({}, async () => unreachable)
    );
    expect(readAheadSwitch()).not.toBeDisabled();
    await editor(
      {},
      datasource({}, async () => Promise.reject(new Error('502')))
    );
    for (const el of document.querySelectorAll('#qr-noreadahead')) {
      expect(el).not.toBeDisabled();
    }
  });

  it('disables "Cold cache" on Azure SQL Database even when the settings allow it', async () => {
    await editor(
      {},
      datasource({ allowBufferPoolClear: true }, async () => azure)
    );
    await waitFor(() => expect(document.getElementById('qr-clear')).toBeDisabled());
    expect(screen.getByTestId('qr-clear-refused')).toHaveTextContent('not available here');
  });
});

describe('ReplayDataSource.health', () => {
  it('asks the server once for every editor, and again after a failure', async () => {
    let fail = true;
    const ds = datasource({}, async () => {
      if (fail) {
        throw new Error('502');
      }
      return box(true);
    });
    await expect(ds.health()).rejects.toThrow('502');
    fail = false;
    const [a, b] = await Promise.all([ds.health(), ds.health()]);
    expect(a).toEqual(box(true));
    expect(b).toBe(a);
    expect(ds.getResource).toHaveBeenCalledTimes(2);
  });
});
