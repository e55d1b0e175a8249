import { AuthType, ReplayDataSourceOptions, ReplaySecureJsonData } from '../../types';
import { HealthReport } from '../../health';

export type AzureCredential = NonNullable<ReplayDataSourceOptions['azureCredential']>;

/**
 * The config editor's pure rules: how a typed value becomes a setting and
 * which label the user field wears. Plain functions, so they are unit-tested
 * without rendering.
 */

/** Empty text clears a setting (the backend's default applies). */
export function textSetting(v: string): string | undefined {
  return v === '' ? undefined : v;
}

/** A whole-number setting: empty clears it. */
export function numberSetting(v: string): number | undefined {
  return v === '' ? undefined : Number(v);
}

/** Seconds as a number, anything else (30s, 5m) kept as a duration string; empty clears it. */
export function durationSetting(raw: string): number | string | undefined {
  const v = raw.trim();
  return v === '' ? undefined : /^\d+(\.\d+)?$/.test(v) ? Number(v) : v;
}

/** One symbol server URL per line, blank lines dropped; none clears the setting. */
export function symbolServersSetting(text: string): string[] | undefined {
  const list = text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : undefined;
}

/** Whether a secret is saved (the server says so) or typed in this edit. */
export function secretSet(
  fields: Record<string, boolean> | undefined,
  data: Partial<ReplaySecureJsonData> | undefined,
  key: keyof ReplaySecureJsonData
): boolean {
  return !!fields?.[key] || !!data?.[key];
}

/** The user field's label and help for an authentication method. */
export function userField(auth: AuthType, azure: AzureCredential): { label: string; tooltip: string } {
  if (auth === 'sql') {
    return { label: 'User', tooltip: 'The SQL login' };
  }
  if (auth === 'windows') {
    return { label: 'Kerberos principal', tooltip: 'user@REALM; optional with a credential cache' };
  }
  return azure === 'servicePrincipal'
    ? { label: 'Client id', tooltip: 'The application (client) id of the service principal' }
    : { label: 'Identity client id', tooltip: 'Optional: the client id of a user-assigned managed identity' };
}

/** How a health report is shown: failed, succeeded with permissions missing, or all well. */
export function healthSeverity(r: Pick<HealthReport, 'ok' | 'missing'>): 'error' | 'warning' | 'success' {
  return r.ok ? (r.missing?.length ? 'warning' : 'success') : 'error';
}

/** "db1:1433 · SQL Server 16.0 · Developer · persona tracer · sysadmin": what the server said, what it left out skipped. */
export function serverFacts(r: HealthReport): string {
  return [
    r.target,
    r.version && `SQL Server ${r.version}`,
    r.edition,
    r.persona && `persona ${r.persona}`,
    r.sysadmin ? 'sysadmin' : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/** A permission's granted column. */
export function grantedText(p: { granted: boolean; required?: boolean }): string {
  return p.granted ? 'yes' : p.required ? 'no (required)' : 'no';
}
