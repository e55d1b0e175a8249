import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { Alert, InlineField, Input, RadioButtonGroup, SecretInput } from '@grafana/ui';
import { ReplayDataSourceOptions, ReplaySecureJsonData, settingsProblems } from '../types';

type Props = DataSourcePluginOptionsEditorProps<ReplayDataSourceOptions, ReplaySecureJsonData>;

const ENCRYPT_OPTIONS = [
  { label: 'true', value: 'true' as const, description: 'TLS, server certificate verified' },
  { label: 'strict', value: 'strict' as const, description: 'TDS 8 strict encryption' },
  { label: 'disable', value: 'disable' as const, description: 'no TLS at all; labs only' },
];

/** Connection settings; the password is stored encrypted by Grafana and never sent back. */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const { jsonData, secureJsonFields, secureJsonData } = options;
  const setJson = (patch: Partial<ReplayDataSourceOptions>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });
  const text = (key: 'host' | 'database' | 'user') => (e: ChangeEvent<HTMLInputElement>) =>
    setJson({ [key]: e.target.value });
  const passwordSet = !!secureJsonFields?.password || !!secureJsonData?.password;
  const problems = settingsProblems(jsonData, passwordSet);

  return (
    <>
      <InlineField label="Host" labelWidth={20} tooltip="SQL Server host name or address">
        <Input id="qr-host" value={jsonData.host ?? ''} onChange={text('host')} width={40} placeholder="sqlserver.example" />
      </InlineField>
      <InlineField label="Port" labelWidth={20}>
        <Input
          id="qr-port"
          type="number"
          value={jsonData.port ?? ''}
          onChange={(e: ChangeEvent<HTMLInputElement>) =>
            setJson({ port: e.target.value === '' ? undefined : Number(e.target.value) })
          }
          width={40}
          placeholder="1433"
        />
      </InlineField>
      <InlineField label="Database" labelWidth={20}>
        <Input id="qr-database" value={jsonData.database ?? ''} onChange={text('database')} width={40} />
      </InlineField>
      <InlineField label="User" labelWidth={20}>
        <Input id="qr-user" value={jsonData.user ?? ''} onChange={text('user')} width={40} />
      </InlineField>
      <InlineField label="Password" labelWidth={20}>
        <SecretInput
          id="qr-password"
          isConfigured={!!secureJsonFields?.password}
          value={secureJsonData?.password ?? ''}
          width={40}
          onReset={() =>
            onOptionsChange({
              ...options,
              secureJsonFields: { ...secureJsonFields, password: false },
              secureJsonData: { ...secureJsonData, password: '' },
            })
          }
          onChange={(e: ChangeEvent<HTMLInputElement>) =>
            onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, password: e.target.value } })
          }
        />
      </InlineField>
      <InlineField label="Encrypt" labelWidth={20}>
        <RadioButtonGroup
          options={ENCRYPT_OPTIONS}
          value={jsonData.encrypt ?? 'true'}
          onChange={(v) => setJson({ encrypt: v })}
        />
      </InlineField>
      {problems.length > 0 && (
        <Alert severity="warning" title="Settings incomplete" data-testid="qr-settings-problems">
          {problems.join('; ')}
        </Alert>
      )}
    </>
  );
}
