import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { DataSourceSettings } from '@grafana/data';
import { ConfigEditor } from './components/ConfigEditor';
import { ReplayDataSourceOptions, ReplaySecureJsonData, settingsProblems } from './types';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({}),
  getTemplateSrv: () => ({ replace: (s: string) => s }),
}));

function settings(jsonData: ReplayDataSourceOptions, passwordConfigured = false) {
  return {
    id: 1,
    uid: 'qr',
    name: 'QueryReplay',
    type: 'queryreplay-sqlserver-datasource',
    jsonData,
    secureJsonFields: { password: passwordConfigured },
    secureJsonData: {},
  } as unknown as DataSourceSettings<ReplayDataSourceOptions, ReplaySecureJsonData>;
}

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
    render(<ConfigEditor options={settings({ host: 'db1', user: 'qr' }, true)} onOptionsChange={jest.fn()} />);
    expect(screen.queryByTestId('qr-settings-problems')).toBeNull();
  });
});

describe('ConfigEditor encryption', () => {
  it('stores the chosen encrypt mode', () => {
    const onOptionsChange = jest.fn();
    render(<ConfigEditor options={settings({ host: 'db1', user: 'qr' }, true)} onOptionsChange={onOptionsChange} />);
    fireEvent.click(screen.getByLabelText('disable'));
    expect(onOptionsChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { host: 'db1', user: 'qr', encrypt: 'disable' } })
    );
  });
});
