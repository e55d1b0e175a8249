import React from 'react';
import { render, screen } from '@testing-library/react';
import { AppRootProps, PluginType } from '@grafana/data';
import { AppRoot } from './AppRoot';
import { NESTED_PLUGINS } from './nested';
import appJson from '../plugin.json';
import dsJson from '../datasource/plugin.json';
import panelJson from '../panel/plugin.json';
import { plugin } from '../module';

// Grafana installs its page chrome as @grafana/runtime's PluginPage at
// start-up; here a marked stand-in shows that the app page renders inside it.
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  PluginPage: ({ children }: { children: React.ReactNode }) => <div data-testid="grafana-plugin-page">{children}</div>,
}));

describe('app plugin', () => {
  it('includes exactly the nested plugins it describes', () => {
    const included = appJson.includes.filter((i) => i.type !== 'page').map((i) => ({ type: i.type, path: i.path }));
    expect(included).toEqual(NESTED_PLUGINS.map((p) => ({ type: p.type, path: p.path })));
    expect(NESTED_PLUGINS.map((p) => p.id)).toEqual([dsJson.id, panelJson.id]);
  });

  it('uses ids that Grafana accepts', () => {
    for (const id of [appJson.id, dsJson.id, panelJson.id]) {
      expect(id).toMatch(/^[0-9a-z]+-([0-9a-z]+-)?(app|panel|datasource)$/);
    }
    expect(dsJson.executable).toBe('gpx_queryreplay');
    expect(dsJson.backend).toBe(true);
  });

  it('renders its root page', () => {
    const props = { meta: { id: appJson.id, type: PluginType.app } } as unknown as AppRootProps;
    render(<AppRoot {...props} />);
    expect(screen.getByTestId('queryreplay-app-root')).toHaveTextContent('QueryReplay SQL Server');
    expect(screen.getByText('queryreplay-replay-panel')).toBeInTheDocument();
    expect(plugin.root).toBe(AppRoot);
    expect(screen.getByTestId('grafana-plugin-page')).toContainElement(screen.getByTestId('queryreplay-app-root'));
  });
});
