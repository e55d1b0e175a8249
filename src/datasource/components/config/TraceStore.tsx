import React, { ChangeEvent } from 'react';
import { FieldSet, InlineField, Input, SecretInput } from '@grafana/ui';
import { INPUT_W, LABEL_W, SettingsEdit } from './edit';
import { numberSetting } from './fields';

const STORE_LIMITS = [
  ['maxTraces', 'Traces in memory', '20', 'Decoded traces kept in memory (least recently used go first)'],
  ['maxMemoryMB', 'Memory (MB)', '512', 'Memory for decoded traces'],
  ['maxAgeHours', 'Keep for (hours)', '168', 'Stored bundles older than this are deleted'],
  ['maxDiskMB', 'Disk (MB)', '2048', 'Stored bundles beyond this are deleted, oldest first'],
  ['maxBundleMB', 'Bundle size (MB)', '256', 'Largest bundle uploaded or loaded, once decompressed (at most 4096)'],
] as const;

/** Where bundles persist (a directory or a bucket, with S3 keys for s3://) and how many are kept. */
export function TraceStoreSection({ edit: { jsonData, setStore, secret } }: { edit: SettingsEdit }) {
  const store = jsonData.traceStore;
  return (
    <FieldSet label="Trace store">
      <InlineField
        label="Directory"
        labelWidth={LABEL_W}
        tooltip="Where trace bundles persist; empty: $GF_PLUGIN_TRACE_STORE_DIR, else Grafana's data path"
      >
        <Input
          id="qr-store-dir"
          value={store?.directory ?? ''}
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
          value={store?.bucketURL ?? ''}
          onChange={(e: ChangeEvent<HTMLInputElement>) => setStore({ bucketURL: e.target.value || undefined })}
          width={INPUT_W}
        />
      </InlineField>
      {store?.bucketURL?.startsWith('s3://') && (
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
      {STORE_LIMITS.map(([key, label, ph, help]) => (
        <InlineField key={key} label={label} labelWidth={LABEL_W} tooltip={help}>
          <Input
            id={`qr-store-${key}`}
            type="number"
            value={store?.[key] ?? ''}
            onChange={(e: ChangeEvent<HTMLInputElement>) => setStore({ [key]: numberSetting(e.target.value) })}
            width={INPUT_W}
            placeholder={ph}
          />
        </InlineField>
      ))}
    </FieldSet>
  );
}
