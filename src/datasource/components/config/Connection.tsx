import React from 'react';
import { FieldSet, InlineField, Input } from '@grafana/ui';
import { INPUT_W, LABEL_W, NumberField, SettingsEdit } from './edit';

/** Host, port, default database and the connect timeout. */
export function ConnectionSection({ edit }: { edit: SettingsEdit }) {
  const { jsonData, text } = edit;
  return (
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
      <NumberField
        edit={edit}
        setting="port"
        id="qr-port"
        label="Port"
        tooltip="TCP port (default 1433)"
        placeholder="1433"
      />
      <InlineField
        label="Default database"
        labelWidth={LABEL_W}
        tooltip="Traces run here unless the query names another; empty: the login's default database"
      >
        <Input id="qr-database" value={jsonData.database ?? ''} onChange={text('database')} width={INPUT_W} />
      </InlineField>
      <NumberField
        edit={edit}
        setting="connectTimeoutSeconds"
        id="qr-connect-timeout"
        label="Connect timeout (s)"
        tooltip="Dial and login timeout; also bounds the health check (default 15)"
        placeholder="15"
      />
    </FieldSet>
  );
}
