import React from 'react';
import { FieldSet, InlineField, Input, RadioButtonGroup, SecretInput } from '@grafana/ui';
import { AuthType } from '../../types';
import { INPUT_W, LABEL_W, SettingsEdit, TextField } from './edit';
import { userField } from './fields';

const AUTH_OPTIONS = [
  { label: 'SQL login', value: 'sql' as const, description: 'user and password' },
  { label: 'Windows (Kerberos)', value: 'windows' as const, description: 'go-mssqldb krb5 integrated authentication' },
  { label: 'Microsoft Entra ID', value: 'azuread' as const, description: 'service principal or managed identity' },
];
const AZURE_OPTIONS = [
  { label: 'Service principal', value: 'servicePrincipal' as const },
  { label: 'Managed identity', value: 'managedIdentity' as const },
];
const SECRET_HELP = 'Stored encrypted by Grafana, never sent back to the browser';

/** The method, then only the fields that method uses; secrets in secureJsonData. */
export function AuthenticationSection({ edit }: { edit: SettingsEdit }) {
  const { jsonData, setJson, text, secret } = edit;
  const auth: AuthType = jsonData.authType ?? 'sql';
  const azure = jsonData.azureCredential ?? 'servicePrincipal';
  const servicePrincipal = auth === 'azuread' && azure === 'servicePrincipal';
  const user = userField(auth, azure);
  return (
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
      {servicePrincipal && (
        <InlineField label="Tenant id" labelWidth={LABEL_W} tooltip="The Microsoft Entra tenant (directory) id">
          <Input id="qr-tenant" value={jsonData.tenantId ?? ''} onChange={text('tenantId')} width={INPUT_W} />
        </InlineField>
      )}
      <InlineField label={user.label} labelWidth={LABEL_W} tooltip={user.tooltip}>
        <Input id="qr-user" value={jsonData.user ?? ''} onChange={text('user')} width={INPUT_W} />
      </InlineField>
      {(auth === 'sql' || auth === 'windows') && (
        <InlineField label="Password" labelWidth={LABEL_W} tooltip={SECRET_HELP}>
          <SecretInput id="qr-password" width={INPUT_W} {...secret('password')} />
        </InlineField>
      )}
      {servicePrincipal && (
        <InlineField label="Client secret" labelWidth={LABEL_W} tooltip={SECRET_HELP}>
          <SecretInput id="qr-client-secret" width={INPUT_W} {...secret('clientSecret')} />
        </InlineField>
      )}
      {auth === 'windows' && <KerberosFields edit={edit} />}
    </FieldSet>
  );
}

/** krb5 realm, config file, keytab and credential cache (go-mssqldb's krb5-* settings). */
function KerberosFields({ edit }: { edit: SettingsEdit }) {
  return (
    <>
      <TextField
        edit={edit}
        setting="kerberosRealm"
        id="qr-krb-realm"
        label="Realm"
        tooltip="krb5-realm; required with a password or a keytab"
      />
      <TextField
        edit={edit}
        setting="kerberosConfigFile"
        id="qr-krb-config"
        label="krb5.conf path"
        tooltip="krb5-configfile on the Grafana host; required with a password"
        placeholder="/etc/krb5.conf"
      />
      <TextField
        edit={edit}
        setting="kerberosKeytabFile"
        id="qr-krb-keytab"
        label="Keytab path"
        tooltip="krb5-keytabfile: log in with a keytab instead of a password"
      />
      <TextField
        edit={edit}
        setting="kerberosCredentialCache"
        id="qr-krb-ccache"
        label="Credential cache"
        tooltip="krb5-credcachefile: use an existing ticket cache"
      />
    </>
  );
}
