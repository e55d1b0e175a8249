import React from 'react';
import { config } from '@grafana/runtime';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { DataSourceSettings } from '@grafana/data';
import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { ReplayDataSource } from './datasource';
import { ReplayDataSourceOptions, ReplayQuery, ReplaySecureJsonData, settingsProblems } from './types';
import { installFakeCanvas } from '../panel/testing/fakeCanvas';

// Combobox measures its options' text on a canvas
installFakeCanvas();

const backend = { get: jest.fn(), delete: jest.fn() };
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => backend,
  getTemplateSrv: () => ({ replace: (s: string) => s }),
}));
// Monaco does not run in jsdom: the code editor is a textarea with the same callbacks
jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  CodeEditor: (p: { value: string; onBlur: (v: string) => void; language: string }) => (
    <textarea
      data-testid="code-editor"
      data-language={p.language}
      defaultValue={p.value}
      onBlur={(e) => p.onBlur(e.target.value)}
    />
  ),
}));

// The scaffolded react-inlinesvg mock drops every prop but src, so a Tooltip
// hung on an Icon (InlineField's info icon) never hears focus or hover: this
// one keeps the trigger's ref and handlers, so the real Tooltip opens.
jest.mock('react-inlinesvg', () => {
  const { createElement } = jest.requireActual('react');
  return {
    __esModule: true,
    default: (p: Record<string, unknown>) => {
      const { src, innerRef, onLoad, onError, loader, title, width, height, ...rest } = p;
      void [onLoad, onError, loader, title, width, height];
      const testId = String(src).replace(/(.+)\/(.+)\.svg$/, '$2');
      return createElement('svg', { ...rest, ref: innerRef, 'data-testid': testId, viewBox: '0 0 24 24' });
    },
  };
});

function settings(
  jsonData: ReplayDataSourceOptions,
  secure: Partial<Record<keyof ReplaySecureJsonData, boolean>> = {}
) {
  return {
    id: 1,
    uid: 'qr',
    name: 'QueryReplay',
    type: 'queryreplay-sqlserver-datasource',
    jsonData,
    secureJsonFields: secure,
    secureJsonData: {},
  } as unknown as DataSourceSettings<ReplayDataSourceOptions, ReplaySecureJsonData>;
}

describe('ConfigEditor', () => {
  it('sets the lowest role that may trace, Editor by default', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings({ host: 'db1' })} onOptionsChange={onOptionsChange} />);
    expect(screen.getByLabelText('Editor')).toBeChecked();
    fireEvent.click(screen.getByLabelText('Admin'));
    expect(onOptionsChange.mock.lastCall[0].jsonData.minTraceRole).toBe('Admin');
  });

  it('shows the fields of the chosen authentication method', () => {
    const { rerender } = render(<ConfigEditor options={settings({ host: 'db1' })} onOptionsChange={jest.fn()} />);
    for (const id of [
      'qr-host',
      'qr-port',
      'qr-database',
      'qr-connect-timeout',
      'qr-user',
      'qr-password',
      'qr-tls-ca',
      'qr-max-concurrent',
      'qr-queue-timeout',
      'qr-trace-timeout',
      'qr-max-events',
      'qr-max-query',
      'qr-allow-clear',
      'qr-allow-mod',
      'qr-symbol-servers',
      'qr-symbol-cache',
      'qr-store-dir',
      'qr-store-bucket',
      'qr-store-maxTraces',
      'qr-store-maxMemoryMB',
      'qr-store-maxAgeHours',
      'qr-store-maxDiskMB',
      'qr-store-maxBundleMB',
    ]) {
      expect(document.getElementById(id)).not.toBeNull();
    }
    expect(document.getElementById('qr-tenant')).toBeNull();
    rerender(<ConfigEditor options={settings({ host: 'db1', authType: 'azuread' })} onOptionsChange={jest.fn()} />);
    expect(document.getElementById('qr-tenant')).not.toBeNull();
    expect(document.getElementById('qr-client-secret')).not.toBeNull();
    expect(document.getElementById('qr-password')).toBeNull();
    rerender(<ConfigEditor options={settings({ host: 'db1', authType: 'windows' })} onOptionsChange={jest.fn()} />);
    for (const id of ['qr-krb-realm', 'qr-krb-config', 'qr-krb-keytab', 'qr-krb-ccache', 'qr-password']) {
      expect(document.getElementById(id)).not.toBeNull();
    }
  });

  it('keeps durations as numbers or duration strings and symbol servers as a list', () => {
    const onChange = jest.fn();
    render(<ConfigEditor options={settings({ host: 'db1' })} onOptionsChange={onChange} />);
    fireEvent.change(document.getElementById('qr-trace-timeout')!, { target: { value: '5m' } });
    expect(onChange.mock.lastCall[0].jsonData.traceTimeout).toBe('5m');
    fireEvent.change(document.getElementById('qr-queue-timeout')!, { target: { value: '30' } });
    expect(onChange.mock.lastCall[0].jsonData.traceQueueTimeout).toBe(30);
    fireEvent.change(document.getElementById('qr-symbol-servers')!, { target: { value: 'https://a\n\n https://b ' } });
    expect(onChange.mock.lastCall[0].jsonData.symbolServers).toEqual(['https://a', 'https://b']);
    fireEvent.change(document.getElementById('qr-store-maxTraces')!, { target: { value: '50' } });
    expect(onChange.mock.lastCall[0].jsonData.traceStore).toEqual({ maxTraces: 50 });
    fireEvent.change(document.getElementById('qr-max-query')!, { target: { value: '8' } });
    expect(onChange.mock.lastCall[0].jsonData.maxQueryMB).toBe(8);
  });

  it('asks for S3 keys only with an s3:// bucket, as secrets', () => {
    const onChange = jest.fn();
    const { rerender } = render(
      <ConfigEditor
        options={settings({ host: 'db1', traceStore: { bucketURL: 'file:///x' } })}
        onOptionsChange={onChange}
      />
    );
    expect(document.getElementById('qr-store-access-key')).toBeNull();
    rerender(
      <ConfigEditor
        options={settings({ host: 'db1', traceStore: { bucketURL: 's3://traces?region=eu-west-1' } })}
        onOptionsChange={onChange}
      />
    );
    fireEvent.change(document.getElementById('qr-store-secret-key')!, { target: { value: 'shh' } });
    expect(onChange.mock.lastCall[0].secureJsonData.traceStoreSecretKey).toBe('shh');
    expect(JSON.stringify(onChange.mock.lastCall[0].jsonData)).not.toContain('shh');
    expect(document.getElementById('qr-store-access-key')).not.toBeNull();
  });

  it('resets a configured secret without ever showing it', () => {
    const onChange = jest.fn();
    render(
      <ConfigEditor options={settings({ host: 'db1', user: 'qr' }, { password: true })} onOptionsChange={onChange} />
    );
    expect(screen.queryByTestId('qr-settings-problems')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: /reset/i }));
    expect(onChange.mock.lastCall[0].secureJsonFields.password).toBe(false);
    expect(onChange.mock.lastCall[0].secureJsonData.password).toBe('');
  });

  it('lists the missing permissions the health check reports', async () => {
    backend.get.mockResolvedValueOnce({
      ok: true,
      message: 'connected to SQL Server at db1:1433',
      version: '16.0.4135.4',
      persona: 'box',
      permissions: [
        {
          permission: 'ALTER ANY EVENT SESSION',
          why: 'create the private trace session',
          granted: true,
          required: true,
        },
        { permission: 'VIEW SERVER STATE', why: 'read the event file back', granted: false, required: true },
      ],
      missing: ['VIEW SERVER STATE: read the event file back'],
    });
    render(
      <ConfigEditor options={settings({ host: 'db1', user: 'qr' }, { password: true })} onOptionsChange={jest.fn()} />
    );
    fireEvent.click(screen.getByText('Check connection and permissions'));
    await waitFor(() => expect(screen.getByTestId('qr-health-missing')).toHaveTextContent('VIEW SERVER STATE'));
    expect(backend.get.mock.lastCall[0]).toBe('/api/datasources/uid/qr/resources/health');
    expect(screen.getByTestId('qr-health-report')).toHaveTextContent('no (required)');
    expect(screen.getByTestId('qr-health-report')).toHaveTextContent('16.0.4135.4');
  });

  it('says why the health check failed', async () => {
    backend.get.mockRejectedValueOnce({ status: 400, data: { error: 'invalid datasource settings: host is missing' } });
    render(<ConfigEditor options={settings({})} onOptionsChange={jest.fn()} />);
    fireEvent.click(screen.getByText('Check connection and permissions'));
    await waitFor(() => expect(screen.getByText('invalid datasource settings: host is missing')).toBeInTheDocument());
  });
});

function datasource(jsonData: ReplayDataSourceOptions, traces: unknown[] = []) {
  const ds = new ReplayDataSource({ uid: 'qr', jsonData, meta: { id: 'queryreplay-sqlserver-datasource' } } as never);
  ds.getResource = jest.fn(async (path: string) =>
    path === 'databases' ? [{ name: 'QueryReplayDemo', databaseId: 5, state: 'ONLINE' }] : traces
  ) as never;
  ds.postResource = jest.fn(async () => ({ traceId: '0190d5c2a0e87c3b9a51e2f4c6d8b0a1' })) as never;
  return ds;
}

const saved = [
  {
    traceId: '0190d5c2a0e87c3b9a51e2f4c6d8b0a1',
    statement: 'SELECT COUNT(*) FROM dbo.Orders',
    database: 'QueryReplayDemo',
    startedAt: '2026-11-29T12:00:00Z',
    events: 1234,
    durationUs: 5400,
    bytes: 999,
  },
];

function editor(query: Partial<ReplayQuery>, ds: ReplayDataSource, onChange = jest.fn(), onRunQuery = jest.fn()) {
  render(<QueryEditor query={{ refId: 'A', ...query }} datasource={ds} onChange={onChange} onRunQuery={onRunQuery} />);
  return { onChange, onRunQuery };
}

describe('QueryEditor', () => {
  it('edits the SQL in the code editor and runs it with Execute', async () => {
    const { onChange, onRunQuery } = editor({ sql: 'SELECT 1' }, datasource({}));
    const code = screen.getByTestId('code-editor');
    expect(code).toHaveAttribute('data-language', 'sql');
    fireEvent.blur(code, { target: { value: 'SELECT 2' } });
    expect(onChange.mock.lastCall[0].sql).toBe('SELECT 2');
    fireEvent.click(screen.getByTestId('qr-execute'));
    expect(onRunQuery).toHaveBeenCalled();
    await act(async () => undefined);
  });

  it('gives a trace a fresh run request on every Execute and Ctrl/Cmd+S, and nothing else one', async () => {
    const { onChange, onRunQuery } = editor(
      { sql: 'SELECT 1', run: '1700000000000-00000000000000000000000000000001' },
      datasource({})
    );
    fireEvent.click(screen.getByTestId('qr-execute'));
    fireEvent.click(screen.getByTestId('qr-execute'));
    const runs = onChange.mock.calls.map((c) => c[0].run);
    expect(runs).toHaveLength(2);
    for (const r of runs) {
      expect(r).toMatch(/^\d{13}-[0-9a-f]{32}$/);
      expect(r).not.toBe('1700000000000-00000000000000000000000000000001');
    }
    expect(runs[0]).not.toBe(runs[1]);
    expect(onRunQuery).toHaveBeenCalledTimes(2);
    await act(async () => undefined);
  });

  it('keeps the trace id a run returned, so the saved dashboard opens the stored trace', async () => {
    const id = 'cd'.repeat(16);
    const onChange = jest.fn();
    const query: ReplayQuery = { refId: 'A', sql: 'SELECT 1', run: '1700000000000-00000000000000000000000000000001' };
    const data = { series: [{ refId: 'A', fields: [], length: 0, meta: { custom: { traceId: id } } }] } as never;
    render(
      <QueryEditor query={query} datasource={datasource({})} onChange={onChange} onRunQuery={jest.fn()} data={data} />
    );
    await act(async () => undefined);
    expect(onChange).toHaveBeenCalledWith({ ...query, traceId: id });
  });

  it('runs a saved-trace query without a run request', async () => {
    const { onChange, onRunQuery } = editor({ queryType: 'bundle', traceId: 'ab'.repeat(16) }, datasource({}));
    fireEvent.click(screen.getByTestId('qr-execute'));
    expect(onChange.mock.lastCall[0].run).toBeUndefined();
    expect(onRunQuery).toHaveBeenCalled();
    await act(async () => undefined);
  });

  it('offers a cold cache only when the data source allows it', async () => {
    editor({}, datasource({}));
    expect(document.getElementById('qr-clear')).toBeNull();
    expect(screen.getByText(/are refused by this data source/)).toBeInTheDocument();
    await act(async () => undefined);
  });

  it('offers a cold cache and says modifications roll back when allowed', async () => {
    const { onChange } = editor({}, datasource({ allowBufferPoolClear: true, allowModifications: true }));
    fireEvent.click(document.getElementById('qr-clear')!);
    expect(onChange.mock.lastCall[0].options.clearBufferPool).toBe(true);
    expect(screen.getByText(/always rolled back/)).toBeInTheDocument();
    await act(async () => undefined);
  });

  it('turns event groups off one by one', async () => {
    const { onChange } = editor({}, datasource({}));
    fireEvent.click(screen.getByLabelText('Locks'));
    expect(onChange.mock.lastCall[0].options.events).toEqual(['waits', 'memory', 'splits', 'log', 'fileIO']);
    await act(async () => undefined);
  });

  it('loads the databases from the server', async () => {
    const ds = datasource({});
    editor({}, ds);
    await waitFor(() => expect(ds.getResource).toHaveBeenCalledWith('databases'));
  });

  it('lists saved traces and opens one', async () => {
    const { onChange, onRunQuery } = editor({}, datasource({}, saved));
    await waitFor(() =>
      expect(screen.getByTestId('qr-saved-traces')).toHaveTextContent('SELECT COUNT(*) FROM dbo.Orders')
    );
    expect(screen.getByTestId('qr-saved-traces')).toHaveTextContent('1,234');
    fireEvent.click(screen.getByLabelText('Open trace 0190d5c2a0e87c3b9a51e2f4c6d8b0a1'));
    expect(onChange.mock.lastCall[0]).toMatchObject({
      queryType: 'bundle',
      traceId: '0190d5c2a0e87c3b9a51e2f4c6d8b0a1',
    });
    expect(onRunQuery).toHaveBeenCalled();
  });

  it("links the bundle download under Grafana's sub-path", async () => {
    const before = config.appSubUrl;
    config.appSubUrl = '/grafana';
    try {
      editor({}, datasource({}, saved));
      const link = await waitFor(() => screen.getByText('Download'));
      expect(link.getAttribute('href')).toBe(
        '/grafana/api/datasources/uid/qr/resources/traces/0190d5c2a0e87c3b9a51e2f4c6d8b0a1/bundle'
      );
    } finally {
      config.appSubUrl = before;
    }
  });

  it('deletes a saved trace through the resource', async () => {
    backend.delete.mockResolvedValueOnce({});
    editor({}, datasource({}, saved));
    await waitFor(() => screen.getByLabelText('Delete trace 0190d5c2a0e87c3b9a51e2f4c6d8b0a1'));
    fireEvent.click(screen.getByLabelText('Delete trace 0190d5c2a0e87c3b9a51e2f4c6d8b0a1'));
    await waitFor(() =>
      expect(backend.delete).toHaveBeenCalledWith(
        '/api/datasources/uid/qr/resources/traces/0190d5c2a0e87c3b9a51e2f4c6d8b0a1',
        undefined,
        { showErrorAlert: false }
      )
    );
  });

  it('shows the compare form for two saved traces instead of the SQL', async () => {
    editor({ queryType: 'compare' }, datasource({}, saved));
    expect(screen.queryByTestId('code-editor')).toBeNull();
    expect(screen.getByTestId('qr-compare-form')).toHaveTextContent('Trace A');
    expect(screen.getByTestId('qr-compare-form')).toHaveTextContent('Trace B');
    await act(async () => undefined);
  });

  it('offers Live for a trace, off by default, and keeps it in the query model', async () => {
    const { onChange } = editor({ sql: 'SELECT 1' }, datasource({}));
    const live = document.getElementById('qr-live') as HTMLInputElement;
    expect(live).not.toBeNull();
    expect(live).not.toBeChecked();
    fireEvent.click(live);
    expect(onChange.mock.lastCall[0]).toMatchObject({ sql: 'SELECT 1', live: true });
    await act(async () => undefined);
  });

  it('runs a live trace with Execute: live stays on and the run request is fresh', async () => {
    const { onChange, onRunQuery } = editor({ sql: 'SELECT 1', live: true }, datasource({}));
    expect(document.getElementById('qr-live')).toBeChecked();
    fireEvent.click(document.getElementById('qr-live')!);
    expect(onChange.mock.lastCall[0].live).toBe(false);
    fireEvent.click(screen.getByTestId('qr-execute'));
    expect(onChange.mock.lastCall[0]).toMatchObject({ live: true });
    expect(onChange.mock.lastCall[0].run).toMatch(/^\d{13}-[0-9a-f]{32}$/);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    await act(async () => undefined);
  });

  it("says in Live's tooltip what it shows and that the finished replay replaces it", async () => {
    editor({ sql: 'SELECT 1' }, datasource({}));
    const label = screen.getByText('Live').closest('label')!;
    const icon = label.querySelector('[data-testid="info-circle"]')!;
    expect(icon).not.toBeNull();
    // InlineField hangs its tooltip on the info icon, which also opens it on focus
    await act(async () => {
      fireEvent.focus(icon);
    });
    const tip = await screen.findByText(/operators' progress/);
    expect(tip.textContent).toMatch(/pages read and locks/);
    expect(tip.textContent).toMatch(/finished replay replaces/);
  });

  it('offers no Live switch for a probe (it runs on schedule, nobody watches it)', async () => {
    editor({ queryType: 'probe', sql: 'SELECT 1' }, datasource({}));
    expect(document.getElementById('qr-live')).toBeNull();
    expect(document.getElementById('qr-callstacks')).not.toBeNull();
    await act(async () => undefined);
  });

  it('shows the trace id field for saved traces instead of the SQL', async () => {
    editor({ queryType: 'bundle', traceId: 'abc' }, datasource({}));
    expect(screen.queryByTestId('code-editor')).toBeNull();
    expect(document.getElementById('qr-trace-id')).toHaveValue('abc');
    await act(async () => undefined);
  });
});

describe('settingsProblems', () => {
  it.each([
    [{ host: 'db1', user: 'qr' }, true, []],
    [{}, false, ['host is missing', 'user is missing', 'password is missing']],
    [
      { host: 'sqlserver://db1', user: 'u', port: 70000 },
      true,
      [
        'host must be a host name or address, without scheme, path or credentials',
        'port must be a whole number from 1 to 65535',
      ],
    ],
  ])('%j (password set: %s)', (opts, pw, want) => {
    expect(settingsProblems(opts as ReplayDataSourceOptions, pw)).toEqual(want);
  });
});

describe('ConfigEditor', () => {
  it('shows what is missing and reports edits', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings({})} onOptionsChange={onOptionsChange} />);
    expect(screen.getByTestId('qr-settings-problems')).toHaveTextContent('host is missing');

    fireEvent.change(document.getElementById('qr-host')!, { target: { value: 'db1' } });
    expect(onOptionsChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { host: 'db1' } }));

    fireEvent.change(document.getElementById('qr-port')!, { target: { value: '14330' } });
    expect(onOptionsChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { port: 14330 } }));
  });

  it('has nothing to complain about when settings are complete', () => {
    render(
      <ConfigEditor options={settings({ host: 'db1', user: 'qr' }, { password: true })} onOptionsChange={jest.fn()} />
    );
    expect(screen.queryByTestId('qr-settings-problems')).toBeNull();
  });
});

describe('ConfigEditor encryption', () => {
  it('stores the chosen encrypt mode', () => {
    const onOptionsChange = jest.fn();
    render(
      <ConfigEditor
        options={settings({ host: 'db1', user: 'qr' }, { password: true })}
        onOptionsChange={onOptionsChange}
      />
    );
    fireEvent.click(screen.getByLabelText('disable'));
    expect(onOptionsChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { host: 'db1', user: 'qr', encrypt: 'disable' } })
    );
  });
});
