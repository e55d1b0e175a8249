import React, { ChangeEvent, FormEvent, useState } from 'react';
import { css } from '@emotion/css';
import { DataSourcePluginOptionsEditorProps, GrafanaTheme2 } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import {
  Alert,
  Button,
  FieldSet,
  InlineField,
  InlineSwitch,
  Input,
  RadioButtonGroup,
  SecretInput,
  TextArea,
  useStyles2,
} from '@grafana/ui';
import {
  AuthType,
  ReplayDataSourceOptions,
  ReplaySecureJsonData,
  TraceStoreSettings,
  settingsProblems,
} from '../types';
import { HealthReport } from '../health';

type Props = DataSourcePluginOptionsEditorProps<ReplayDataSourceOptions, ReplaySecureJsonData>;

const LABEL_W = 26;

type NumberSetting = 'port' | 'connectTimeoutSeconds' | 'maxConcurrentTraces' | 'maxEvents' | 'maxQueryMB';
const INPUT_W = 48;

const AUTH_OPTIONS = [
  { label: 'SQL login', value: 'sql' as const, description: 'user and password' },
  { label: 'Windows (Kerberos)', value: 'windows' as const, description: 'go-mssqldb krb5 integrated authentication' },
  { label: 'Microsoft Entra ID', value: 'azuread' as const, description: 'service principal or managed identity' },
];
const AZURE_OPTIONS = [
  { label: 'Service principal', value: 'servicePrincipal' as const },
  { label: 'Managed identity', value: 'managedIdentity' as const },
];
const ENCRYPT_OPTIONS = [
  { label: 'true', value: 'true' as const, description: 'TLS, server certificate verified' },
  { label: 'strict', value: 'strict' as const, description: 'TDS 8 strict encryption (SQL Server 2022+, Azure)' },
  { label: 'disable', value: 'disable' as const, description: 'no TLS at all; labs only' },
];

export type { HealthReport };

/**
 * Every setting of docs/frames.md §2: connection, authentication (secrets in
 * secureJsonData, never sent back), TLS, limits, safety switches, call-stack
 * symbols and the trace store, each with inline help; and a health check that
 * lists the permissions the enabled features still lack.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const styles = useStyles2(getStyles);
  const { jsonData, secureJsonFields, secureJsonData } = options;
  const setJson = (patch: Partial<ReplayDataSourceOptions>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });
  const setStore = (patch: Partial<TraceStoreSettings>) =>
    setJson({ traceStore: { ...jsonData.traceStore, ...patch } });
  const text =
    <K extends keyof ReplayDataSourceOptions>(key: K) =>
    (e: FormEvent<HTMLInputElement | HTMLTextAreaElement>) =>
      setJson({
        [key]: e.currentTarget.value === '' ? undefined : e.currentTarget.value,
      } as Partial<ReplayDataSourceOptions>);
  const number =
    <K extends keyof ReplayDataSourceOptions>(key: K) =>
    (e: ChangeEvent<HTMLInputElement>) =>
      setJson({
        [key]: e.target.value === '' ? undefined : Number(e.target.value),
      } as Partial<ReplayDataSourceOptions>);
  // a whole-number setting: empty clears it (the backend's default applies)
  const numberField = (key: NumberSetting, id: string, label: string, tooltip: string, placeholder: string) => (
    <InlineField label={label} labelWidth={LABEL_W} tooltip={tooltip}>
      <Input
        id={id}
        type="number"
        value={jsonData[key] ?? ''}
        onChange={number(key)}
        width={INPUT_W}
        placeholder={placeholder}
      />
    </InlineField>
  );
  const secret = (key: keyof ReplaySecureJsonData) => ({
    isConfigured: !!secureJsonFields?.[key],
    value: secureJsonData?.[key] ?? '',
    onReset: () =>
      onOptionsChange({
        ...options,
        secureJsonFields: { ...secureJsonFields, [key]: false },
        secureJsonData: { ...secureJsonData, [key]: '' },
      }),
    onChange: (e: FormEvent<HTMLInputElement>) =>
      onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, [key]: e.currentTarget.value } }),
  });
  const passwordSet = !!secureJsonFields?.password || !!secureJsonData?.password;
  const clientSecretSet = !!secureJsonFields?.clientSecret || !!secureJsonData?.clientSecret;
  const problems = settingsProblems(jsonData, passwordSet, clientSecretSet);
  const auth: AuthType = jsonData.authType ?? 'sql';
  const azure = jsonData.azureCredential ?? 'servicePrincipal';

  return (
    <div className={styles.editor}>
      <FieldSet label="Connection">
        <InlineField
          label="Host"
          labelWidth={LABEL_W}
          tooltip="SQL Server host name or address: no scheme, port, path or credentials"
          required
        >
          <Input
            id="qr-host"
            value={jsonData.host ?? ''}
            onChange={text('host')}
            width={INPUT_W}
            placeholder="sqlserver.example.com"
          />
        </InlineField>
        {numberField('port', 'qr-port', 'Port', 'TCP port (default 1433)', '1433')}
        <InlineField
          label="Default database"
          labelWidth={LABEL_W}
          tooltip="Traces run here unless the query names another; empty: the login's default database"
        >
          <Input id="qr-database" value={jsonData.database ?? ''} onChange={text('database')} width={INPUT_W} />
        </InlineField>
        {numberField(
          'connectTimeoutSeconds',
          'qr-connect-timeout',
          'Connect timeout (s)',
          'Dial and login timeout; also bounds the health check (default 15)',
          '15'
        )}
      </FieldSet>

      <FieldSet label="Authentication">
        <InlineField label="Method" labelWidth={LABEL_W}>
          <RadioButtonGroup options={AUTH_OPTIONS} value={auth} onChange={(v) => setJson({ authType: v })} />
        </InlineField>
        {auth === 'azuread' && (
          <InlineField
            label="Credential"
            labelWidth={LABEL_W}
            tooltip="A service principal needs the tenant, the application (client) id and a client secret; a managed identity needs nothing, or the client id of a user-assigned identity"
          >
            <RadioButtonGroup options={AZURE_OPTIONS} value={azure} onChange={(v) => setJson({ azureCredential: v })} />
          </InlineField>
        )}
        {auth === 'azuread' && azure === 'servicePrincipal' && (
          <InlineField label="Tenant id" labelWidth={LABEL_W} tooltip="The Microsoft Entra tenant (directory) id">
            <Input id="qr-tenant" value={jsonData.tenantId ?? ''} onChange={text('tenantId')} width={INPUT_W} />
          </InlineField>
        )}
        <InlineField
          label={
            auth === 'sql'
              ? 'User'
              : auth === 'windows'
                ? 'Kerberos principal'
                : azure === 'servicePrincipal'
                  ? 'Client id'
                  : 'Identity client id'
          }
          labelWidth={LABEL_W}
          tooltip={
            auth === 'sql'
              ? 'The SQL login'
              : auth === 'windows'
                ? 'user@REALM; optional with a credential cache'
                : azure === 'servicePrincipal'
                  ? 'The application (client) id of the service principal'
                  : 'Optional: the client id of a user-assigned managed identity'
          }
        >
          <Input id="qr-user" value={jsonData.user ?? ''} onChange={text('user')} width={INPUT_W} />
        </InlineField>
        {(auth === 'sql' || auth === 'windows') && (
          <InlineField
            label="Password"
            labelWidth={LABEL_W}
            tooltip="Stored encrypted by Grafana, never sent back to the browser"
          >
            <SecretInput id="qr-password" width={INPUT_W} {...secret('password')} />
          </InlineField>
        )}
        {auth === 'azuread' && azure === 'servicePrincipal' && (
          <InlineField
            label="Client secret"
            labelWidth={LABEL_W}
            tooltip="Stored encrypted by Grafana, never sent back to the browser"
          >
            <SecretInput id="qr-client-secret" width={INPUT_W} {...secret('clientSecret')} />
          </InlineField>
        )}
        {auth === 'windows' && (
          <>
            <InlineField label="Realm" labelWidth={LABEL_W} tooltip="krb5-realm; required with a password or a keytab">
              <Input
                id="qr-krb-realm"
                value={jsonData.kerberosRealm ?? ''}
                onChange={text('kerberosRealm')}
                width={INPUT_W}
              />
            </InlineField>
            <InlineField
              label="krb5.conf path"
              labelWidth={LABEL_W}
              tooltip="krb5-configfile on the Grafana host; required with a password"
            >
              <Input
                id="qr-krb-config"
                value={jsonData.kerberosConfigFile ?? ''}
                onChange={text('kerberosConfigFile')}
                width={INPUT_W}
                placeholder="/etc/krb5.conf"
              />
            </InlineField>
            <InlineField
              label="Keytab path"
              labelWidth={LABEL_W}
              tooltip="krb5-keytabfile: log in with a keytab instead of a password"
            >
              <Input
                id="qr-krb-keytab"
                value={jsonData.kerberosKeytabFile ?? ''}
                onChange={text('kerberosKeytabFile')}
                width={INPUT_W}
              />
            </InlineField>
            <InlineField
              label="Credential cache"
              labelWidth={LABEL_W}
              tooltip="krb5-credcachefile: use an existing ticket cache"
            >
              <Input
                id="qr-krb-ccache"
                value={jsonData.kerberosCredentialCache ?? ''}
                onChange={text('kerberosCredentialCache')}
                width={INPUT_W}
              />
            </InlineField>
          </>
        )}
      </FieldSet>

      <FieldSet label="TLS">
        <InlineField label="Encrypt" labelWidth={LABEL_W}>
          <RadioButtonGroup
            options={ENCRYPT_OPTIONS}
            value={jsonData.encrypt ?? 'true'}
            onChange={(v) => setJson({ encrypt: v })}
          />
        </InlineField>
        <InlineField
          label="Skip certificate check"
          labelWidth={LABEL_W}
          tooltip="trustServerCertificate: accept any server certificate. Labs only: it allows a man in the middle."
        >
          <InlineSwitch
            id="qr-trust"
            value={!!jsonData.trustServerCertificate}
            onChange={(e) => setJson({ trustServerCertificate: e.currentTarget.checked })}
          />
        </InlineField>
        <InlineField
          label="CA certificate"
          labelWidth={LABEL_W}
          tooltip="PEM text, or the path of a PEM file on the Grafana host, to trust for the server certificate"
        >
          <TextArea
            id="qr-tls-ca"
            value={jsonData.tlsCA ?? ''}
            onChange={text('tlsCA')}
            rows={3}
            cols={60}
            placeholder="-----BEGIN CERTIFICATE----- … or /etc/ssl/sqlserver-ca.pem"
          />
        </InlineField>
      </FieldSet>

      <FieldSet label="Limits">
        {numberField(
          'maxConcurrentTraces',
          'qr-max-concurrent',
          'Concurrent traces',
          'Traces and probes running at once on this data source (1-32, default 2); more wait in a queue',
          '2'
        )}
        <InlineField
          label="Queue timeout"
          labelWidth={LABEL_W}
          tooltip="How long an extra trace waits for a slot before it is refused (status 429): seconds or a duration such as 30s"
        >
          <Input
            id="qr-queue-timeout"
            value={jsonData.traceQueueTimeout ?? ''}
            onChange={durationField((v) => setJson({ traceQueueTimeout: v }))}
            width={INPUT_W}
            placeholder="30s"
          />
        </InlineField>
        <InlineField
          label="Trace timeout"
          labelWidth={LABEL_W}
          tooltip="A trace never outlives it (query and read-back; the session is always dropped after): seconds or a duration such as 5m"
        >
          <Input
            id="qr-trace-timeout"
            value={jsonData.traceTimeout ?? ''}
            onChange={durationField((v) => setJson({ traceTimeout: v }))}
            width={INPUT_W}
            placeholder="5m"
          />
        </InlineField>
        {numberField(
          'maxEvents',
          'qr-max-events',
          'Event cap',
          'Events read back per trace (default 1,000,000); a capped trace says it is truncated',
          '1000000'
        )}
        {numberField(
          'maxQueryMB',
          'qr-max-query',
          'Query size (MB)',
          "Largest query JSON accepted, the batch text included (default 4, at most 256); a larger one is refused before it is read",
          '4'
        )}
      </FieldSet>

      <FieldSet label="Safety">
        <InlineField
          label="Allow buffer-pool clear"
          labelWidth={LABEL_W}
          tooltip="Lets a query ask for CHECKPOINT + DBCC DROPCLEANBUFFERS first (a cold-cache trace). It empties the cache of the whole instance: never on a busy production server."
        >
          <InlineSwitch
            id="qr-allow-clear"
            value={!!jsonData.allowBufferPoolClear}
            onChange={(e) => setJson({ allowBufferPoolClear: e.currentTarget.checked })}
          />
        </InlineField>
        <InlineField
          label="Allow modifications"
          labelWidth={LABEL_W}
          tooltip="Trace INSERT, UPDATE and DELETE inside a transaction that is always rolled back. Off: they are refused."
        >
          <InlineSwitch
            id="qr-allow-mod"
            value={!!jsonData.allowModifications}
            onChange={(e) => setJson({ allowModifications: e.currentTarget.checked })}
          />
        </InlineField>
      </FieldSet>

      <FieldSet label="Call stacks">
        <InlineField
          label="Symbol servers"
          labelWidth={LABEL_W}
          tooltip="One URL per line, for resolving call stacks to module!Class::Method"
        >
          <TextArea
            id="qr-symbol-servers"
            rows={2}
            cols={60}
            value={(jsonData.symbolServers ?? []).join('\n')}
            onChange={(e: ChangeEvent<HTMLTextAreaElement>) => {
              const list = e.target.value
                .split('\n')
                .map((s) => s.trim())
                .filter(Boolean);
              setJson({ symbolServers: list.length ? list : undefined });
            }}
            placeholder="https://msdl.microsoft.com/download/symbols"
          />
        </InlineField>
        <InlineField
          label="Symbol cache directory"
          labelWidth={LABEL_W}
          tooltip="Where downloaded PDBs are kept on the Grafana host"
        >
          <Input
            id="qr-symbol-cache"
            value={jsonData.symbolCacheDir ?? ''}
            onChange={text('symbolCacheDir')}
            width={INPUT_W}
          />
        </InlineField>
      </FieldSet>

      <FieldSet label="Trace store">
        <InlineField
          label="Directory"
          labelWidth={LABEL_W}
          tooltip="Where trace bundles persist; empty: $GF_PLUGIN_TRACE_STORE_DIR, else Grafana's data path"
        >
          <Input
            id="qr-store-dir"
            value={jsonData.traceStore?.directory ?? ''}
            onChange={(e: ChangeEvent<HTMLInputElement>) => setStore({ directory: e.target.value || undefined })}
            width={INPUT_W}
          />
        </InlineField>
        <InlineField
          label="Bucket URL"
          labelWidth={LABEL_W}
          tooltip="Object storage shared by HA replicas, overriding the directory: s3://BUCKET?region=…, gs://BUCKET, azblob://CONTAINER?storage_account=…, or file:///path"
        >
          <Input
            id="qr-store-bucket"
            value={jsonData.traceStore?.bucketURL ?? ''}
            onChange={(e: ChangeEvent<HTMLInputElement>) => setStore({ bucketURL: e.target.value || undefined })}
            width={INPUT_W}
          />
        </InlineField>
        {jsonData.traceStore?.bucketURL?.startsWith('s3://') && (
          <>
            <InlineField
              label="S3 access key"
              labelWidth={LABEL_W}
              tooltip="Optional, with the secret key; empty: the AWS default chain (environment, instance or task role)"
            >
              <SecretInput id="qr-store-access-key" width={INPUT_W} {...secret('traceStoreAccessKey')} />
            </InlineField>
            <InlineField label="S3 secret key" labelWidth={LABEL_W} tooltip="The access key's secret; stored encrypted">
              <SecretInput id="qr-store-secret-key" width={INPUT_W} {...secret('traceStoreSecretKey')} />
            </InlineField>
          </>
        )}
        {(
          [
            ['maxTraces', 'Traces in memory', '20', 'Decoded traces kept in memory (least recently used go first)'],
            ['maxMemoryMB', 'Memory (MB)', '512', 'Memory for decoded traces'],
            ['maxAgeHours', 'Keep for (hours)', '168', 'Stored bundles older than this are deleted'],
            ['maxDiskMB', 'Disk (MB)', '2048', 'Stored bundles beyond this are deleted, oldest first'],
            ['maxBundleMB', 'Bundle size (MB)', '256', 'Largest bundle uploaded or loaded, once decompressed (at most 4096)'],
          ] as const
        ).map(([key, label, ph, help]) => (
          <InlineField key={key} label={label} labelWidth={LABEL_W} tooltip={help}>
            <Input
              id={`qr-store-${key}`}
              type="number"
              value={jsonData.traceStore?.[key] ?? ''}
              onChange={(e: ChangeEvent<HTMLInputElement>) =>
                setStore({ [key]: e.target.value === '' ? undefined : Number(e.target.value) })
              }
              width={INPUT_W}
              placeholder={ph}
            />
          </InlineField>
        ))}
      </FieldSet>

      {problems.length > 0 && (
        <Alert severity="warning" title="Settings incomplete" data-testid="qr-settings-problems">
          {problems.join('; ')}
        </Alert>
      )}
      <HealthCheck uid={options.uid} />
    </div>
  );
}

/** Seconds as a number, anything else (30s, 5m) kept as a duration string. */
function durationField(set: (v: number | string | undefined) => void) {
  return (e: ChangeEvent<HTMLInputElement>) => {
    const v = e.target.value.trim();
    set(v === '' ? undefined : /^\d+(\.\d+)?$/.test(v) ? Number(v) : v);
  };
}

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
      {report && (
        <div className={styles.gap} data-testid="qr-health-report">
          <Alert
            severity={report.ok ? (report.missing?.length ? 'warning' : 'success') : 'error'}
            title={report.message}
          >
            {[
              report.target,
              report.version && `SQL Server ${report.version}`,
              report.edition,
              report.persona && `persona ${report.persona}`,
              report.sysadmin ? 'sysadmin' : '',
            ]
              .filter(Boolean)
              .join(' · ')}
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
          {report.permissions && report.permissions.length > 0 && (
            <table className={styles.table}>
              <thead>
                <tr>
                  <th>permission</th>
                  <th>granted</th>
                  <th>needed for</th>
                </tr>
              </thead>
              <tbody>
                {report.permissions.map((p) => (
                  <tr key={p.permission}>
                    <td>{p.permission}</td>
                    <td className={p.granted ? styles.ok : p.required ? styles.bad : styles.warn}>
                      {p.granted ? 'yes' : p.required ? 'no (required)' : 'no'}
                    </td>
                    <td>{p.why}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {report.warnings?.map((w) => (
            <Alert key={w} severity="warning" title={w} />
          ))}
          {report.traceStore && <div className={styles.help}>Trace store: {report.traceStore}</div>}
        </div>
      )}
    </FieldSet>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  editor: css({ maxWidth: 900 }),
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
