import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { config } from '@grafana/runtime';
import { Alert, Button, useStyles2 } from '@grafana/ui';
import { SavedTrace } from '../CompareForm';
import { durationText } from './options';

/** The saved traces: refresh, upload a bundle file, and open, download or delete each. */
export function SavedTraces(p: {
  uid: string;
  traces: SavedTrace[] | null;
  error: string | null;
  /** What the last upload did, or null. */
  upload: string | null;
  /** The trace the query shows, highlighted. */
  currentId: string | undefined;
  onRefresh: () => void;
  onFile: (file: File | undefined) => void;
  onOpen: (traceId: string) => void;
  onDelete: (traceId: string) => void;
}) {
  const styles = useStyles2(getStyles);
  return (
    <section className={styles.saved} data-testid="qr-saved-traces">
      <div className={styles.savedBar}>
        <strong>Saved traces</strong>
        <Button size="sm" variant="secondary" icon="sync" onClick={p.onRefresh}>
          Refresh
        </Button>
        <label className={styles.upload}>
          <input
            type="file"
            accept=".json,.gz,application/json,application/gzip"
            data-testid="qr-upload"
            onChange={(e) => p.onFile(e.currentTarget.files?.[0])}
          />
          <span>Upload bundle…</span>
        </label>
        {p.upload && (
          <span className={styles.help} data-testid="qr-upload-status">
            {p.upload}
          </span>
        )}
      </div>
      {p.error && <Alert severity="warning" title={`Saved traces: ${p.error}`} />}
      {p.traces && p.traces.length === 0 && (
        <div className={styles.help}>No saved traces yet: every trace you run is kept here.</div>
      )}
      {p.traces && p.traces.length > 0 && (
        <table className={styles.table}>
          <thead>
            <tr>
              <th>started</th>
              <th>statement</th>
              <th>database</th>
              <th>events</th>
              <th>duration</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {p.traces.map((t) => (
              <tr key={t.traceId} className={t.traceId === p.currentId ? styles.current : undefined}>
                <td>{new Date(t.startedAt).toLocaleString()}</td>
                <td className={styles.statement} title={t.statement}>
                  {t.statement}
                </td>
                <td>{t.database}</td>
                <td>{t.events.toLocaleString('en-US')}</td>
                <td>{durationText(t)}</td>
                <td className={styles.actions}>
                  <Button
                    size="sm"
                    variant="secondary"
                    onClick={() => p.onOpen(t.traceId)}
                    aria-label={`Open trace ${t.traceId}`}
                  >
                    Open
                  </Button>
                  <a className={styles.link} href={bundleURL(p.uid, t.traceId)} download>
                    Download
                  </a>
                  <Button
                    size="sm"
                    variant="destructive"
                    fill="text"
                    icon="trash-alt"
                    onClick={() => p.onDelete(t.traceId)}
                    aria-label={`Delete trace ${t.traceId}`}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, margin: 0 }),
  saved: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(0.5) }),
  savedBar: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center', flexWrap: 'wrap' }),
  upload: css({
    cursor: 'pointer',
    color: theme.colors.text.link,
    fontSize: theme.typography.bodySmall.fontSize,
    input: { width: 0.1, height: 0.1, opacity: 0, position: 'absolute' },
  }),
  table: css({
    borderCollapse: 'collapse',
    fontSize: theme.typography.bodySmall.fontSize,
    'th, td': { textAlign: 'left', padding: theme.spacing(0.25, 1, 0.25, 0), whiteSpace: 'nowrap' },
    th: { color: theme.colors.text.secondary, fontWeight: theme.typography.fontWeightMedium },
  }),
  statement: css({
    maxWidth: 420,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  current: css({ background: theme.colors.action.selected }),
  actions: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center' }),
  link: css({ color: theme.colors.text.link }),
});

/**
 * The download link of a saved trace's bundle. A plain link is not sent
 * through Grafana's backendSrv, so it carries Grafana's sub-path itself
 * (config.appSubUrl: "" at the root, "/grafana" behind root_url
 * https://host/grafana/).
 */
export function bundleURL(uid: string, traceId: string): string {
  return `${config.appSubUrl ?? ''}/api/datasources/uid/${encodeURIComponent(uid)}/resources/traces/${encodeURIComponent(traceId)}/bundle`;
}
