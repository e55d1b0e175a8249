import React from 'react';
import { css } from '@emotion/css';
import { Alert, useStyles2 } from '@grafana/ui';
import { settingsProblems } from '../types';
import { HealthReport } from '../health';
import { ConfigProps, settingsEdit } from './config/edit';
import { secretSet } from './config/fields';
import { ConnectionSection } from './config/Connection';
import { AuthenticationSection } from './config/Authentication';
import { TlsSection } from './config/Tls';
import { LimitsSection, SafetySection } from './config/Limits';
import { SymbolsSection } from './config/Symbols';
import { TraceStoreSection } from './config/TraceStore';
import { HealthCheck } from './config/HealthCheck';

export type { HealthReport };
export { HealthCheck };

/**
 * Every setting of docs/frames.md §2: connection, authentication (secrets in
 * secureJsonData, never sent back), TLS, limits, safety switches, call-stack
 * symbols and the trace store, each with inline help; and a health check that
 * lists the permissions the enabled features still lack.
 */
export function ConfigEditor(props: ConfigProps) {
  const styles = useStyles2(getStyles);
  const { jsonData, secureJsonFields, secureJsonData, uid } = props.options;
  const edit = settingsEdit(props);
  const problems = settingsProblems(
    jsonData,
    secretSet(secureJsonFields, secureJsonData, 'password'),
    secretSet(secureJsonFields, secureJsonData, 'clientSecret')
  );
  return (
    <div className={styles.editor}>
      <ConnectionSection edit={edit} />
      <AuthenticationSection edit={edit} />
      <TlsSection edit={edit} />
      <LimitsSection edit={edit} />
      <SafetySection edit={edit} />
      <SymbolsSection edit={edit} />
      <TraceStoreSection edit={edit} />
      {problems.length > 0 && (
        <Alert severity="warning" title="Settings incomplete" data-testid="qr-settings-problems">
          {problems.join('; ')}
        </Alert>
      )}
      <HealthCheck uid={uid} />
    </div>
  );
}

const getStyles = () => ({
  editor: css({ maxWidth: 900 }),
});
