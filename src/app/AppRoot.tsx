import React from 'react';
import { css } from '@emotion/css';
import { AppRootProps, GrafanaTheme2 } from '@grafana/data';
import { PluginPage } from '@grafana/runtime';
import { Alert, useStyles2 } from '@grafana/ui';
import { NESTED_PLUGINS } from './nested';

/**
 * The app's single page: what the bundle contains and how to start. It is
 * wrapped in Grafana's PluginPage (@grafana/runtime), which Grafana sets at
 * start-up to its own page chrome: breadcrumbs, the title from plugin.json's
 * page include and the navigation, as app pages are expected to have.
 */
export function AppRoot(_props: AppRootProps) {
  const styles = useStyles2(getStyles);
  return (
    <PluginPage>
      <div className={styles.page} data-testid="queryreplay-app-root">
        <h2>QueryReplay</h2>
        <p>
          See what SQL Server&apos;s storage engine does while a query runs: page reads, locks, waits, spills, page
          splits and log records on one timeline, tied to the plan operator that caused them.
        </p>
        <ul>
          {NESTED_PLUGINS.map((p) => (
            <li key={p.id}>
              <strong>{p.name}</strong> (<code>{p.id}</code>): {p.purpose}
            </li>
          ))}
        </ul>
        <Alert severity="info" title="Getting started">
          Add a QueryReplay SQL Server data source, then add a Query Replay panel to a dashboard.
        </Alert>
      </div>
    </PluginPage>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ padding: theme.spacing(2), maxWidth: 900 }),
});
