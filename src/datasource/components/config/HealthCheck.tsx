import React, { useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import { Alert, Button, FieldSet, useStyles2 } from '@grafana/ui';
import { HealthReport } from '../../health';
import { grantedText, healthSeverity, serverFacts } from './fields';

/** Runs GET resources/health (the saved settings) and shows version, persona and every permission. */
export function HealthCheck({ uid }: { uid: string }) {
  const styles = useStyles2(getStyles);
  const [report, setReport] = useState<HealthReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await getBackendSrv().get<HealthReport>(
        `/api/datasources/uid/${uid}/resources/health`,
        undefined,
        undefined,
        {
          showErrorAlert: false,
        }
      );
      setReport(r);
    } catch (e) {
      const fe = e as { data?: { message?: string; error?: string }; message?: string };
      setError(fe.data?.error ?? fe.data?.message ?? fe.message ?? 'the health check failed');
      setReport(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <FieldSet label="Health and permissions" data-testid="qr-health">
      <p className={styles.help}>
        Connects with the saved settings (save first), reports the server and checks every permission the enabled
        features need. Grafana&apos;s “Save &amp; test” runs the same check.
      </p>
      <Button variant="secondary" icon={busy ? 'sync' : 'heart-rate'} onClick={run} disabled={busy || !uid}>
        Check connection and permissions
      </Button>
      {error && (
        <Alert severity="error" title="Health check failed" className={styles.gap}>
          {error}
        </Alert>
      )}
      {report && <HealthReportView report={report} />}
    </FieldSet>
  );
}

/** The server, persona and every permission a health check reported. */
function HealthReportView({ report }: { report: HealthReport }) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.gap} data-testid="qr-health-report">
      <Alert severity={healthSeverity(report)} title={report.message}>
        {serverFacts(report)}
      </Alert>
      {report.missing && report.missing.length > 0 && (
        <div data-testid="qr-health-missing">
          <strong>Missing permissions</strong>
          <ul>
            {report.missing.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        </div>
      )}
      {report.permissions && report.permissions.length > 0 && <PermissionsTable permissions={report.permissions} />}
      {report.warnings?.map((w) => (
        <Alert key={w} severity="warning" title={w} />
      ))}
      {report.traceStore && <div className={styles.help}>Trace store: {report.traceStore}</div>}
    </div>
  );
}

/** Each permission: granted, or missing (required or optional), and what it is needed for. */
function PermissionsTable({ permissions }: { permissions: NonNullable<HealthReport['permissions']> }) {
  const styles = useStyles2(getStyles);
  return (
    <table className={styles.table}>
      <thead>
        <tr>
          <th>permission</th>
          <th>granted</th>
          <th>needed for</th>
        </tr>
      </thead>
      <tbody>
        {permissions.map((p) => (
          <tr key={p.permission}>
            <td>{p.permission}</td>
            <td className={p.granted ? styles.ok : p.required ? styles.bad : styles.warn}>{grantedText(p)}</td>
            <td>{p.why}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  gap: css({ marginTop: theme.spacing(1) }),
  table: css({
    borderCollapse: 'collapse',
    marginTop: theme.spacing(1),
    'th, td': { textAlign: 'left', padding: theme.spacing(0.25, 1, 0.25, 0) },
    th: { color: theme.colors.text.secondary, fontWeight: theme.typography.fontWeightMedium },
  }),
  ok: css({ color: theme.colors.success.text }),
  bad: css({ color: theme.colors.error.text }),
  warn: css({ color: theme.colors.warning.text }),
});
