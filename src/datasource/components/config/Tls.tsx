import React from 'react';
import { FieldSet, InlineField, InlineSwitch, RadioButtonGroup, TextArea } from '@grafana/ui';
import { LABEL_W, SettingsEdit } from './edit';

const ENCRYPT_OPTIONS = [
  { label: 'true', value: 'true' as const, description: 'TLS, server certificate verified' },
  { label: 'strict', value: 'strict' as const, description: 'TDS 8 strict encryption (SQL Server 2022+, Azure)' },
  { label: 'disable', value: 'disable' as const, description: 'no TLS at all; labs only' },
];

/** Encrypt mode, the certificate check and a CA to trust. */
export function TlsSection({ edit: { jsonData, setJson, text } }: { edit: SettingsEdit }) {
  return (
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
  );
}
