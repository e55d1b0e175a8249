import React, { ChangeEvent, FormEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, Input } from '@grafana/ui';
import { ReplayDataSourceOptions, ReplaySecureJsonData, TraceStoreSettings } from '../../types';
import { numberSetting, textSetting } from './fields';

/** The config editor's props; every section gets the same. */
export type ConfigProps = DataSourcePluginOptionsEditorProps<ReplayDataSourceOptions, ReplaySecureJsonData>;

export const LABEL_W = 26;
export const INPUT_W = 48;

/** The ways a section changes the settings, built once per render from the editor's props. */
export interface SettingsEdit {
  jsonData: ReplayDataSourceOptions;
  setJson: (patch: Partial<ReplayDataSourceOptions>) => void;
  setStore: (patch: Partial<TraceStoreSettings>) => void;
  /** onChange of a text input: empty clears the setting. */
  text: (key: keyof ReplayDataSourceOptions) => (e: FormEvent<HTMLInputElement | HTMLTextAreaElement>) => void;
  /** The props of a SecretInput for one secret (shown as configured, never sent back). */
  secret: (key: keyof ReplaySecureJsonData) => {
    isConfigured: boolean;
    value: string;
    onReset: () => void;
    onChange: (e: FormEvent<HTMLInputElement>) => void;
  };
}

export function settingsEdit({ options, onOptionsChange }: ConfigProps): SettingsEdit {
  const { jsonData, secureJsonFields, secureJsonData } = options;
  const setJson = (patch: Partial<ReplayDataSourceOptions>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });
  return {
    jsonData,
    setJson,
    setStore: (patch) => setJson({ traceStore: { ...jsonData.traceStore, ...patch } }),
    text: (key) => (e) => setJson({ [key]: textSetting(e.currentTarget.value) }),
    secret: (key) => ({
      isConfigured: !!secureJsonFields?.[key],
      value: secureJsonData?.[key] ?? '',
      onReset: () =>
        onOptionsChange({
          ...options,
          secureJsonFields: { ...secureJsonFields, [key]: false },
          secureJsonData: { ...secureJsonData, [key]: '' },
        }),
      onChange: (e) =>
        onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, [key]: e.currentTarget.value } }),
    }),
  };
}

type NumberSetting = 'port' | 'connectTimeoutSeconds' | 'maxConcurrentTraces' | 'maxEvents' | 'maxQueryMB';

/** What every single-value setting field shows: its label, tooltip and placeholder. */
interface FieldText {
  id: string;
  label: string;
  tooltip: string;
  placeholder?: string;
}

/** One jsonData value in an input; parse turns the text into the saved value. */
export function SettingInput(
  p: FieldText & { value: string | number | undefined; type?: 'number'; onValue: (text: string) => void }
) {
  return (
    <InlineField label={p.label} labelWidth={LABEL_W} tooltip={p.tooltip}>
      <Input
        id={p.id}
        type={p.type}
        value={p.value ?? ''}
        onChange={(e: ChangeEvent<HTMLInputElement>) => p.onValue(e.target.value)}
        width={INPUT_W}
        placeholder={p.placeholder}
      />
    </InlineField>
  );
}

/** A whole-number setting: empty clears it (the backend's default applies). */
export function NumberField(p: FieldText & { edit: SettingsEdit; setting: NumberSetting }) {
  return (
    <SettingInput
      {...p}
      type="number"
      value={p.edit.jsonData[p.setting]}
      onValue={(text) => p.edit.setJson({ [p.setting]: numberSetting(text) })}
    />
  );
}

type TextSetting = 'kerberosRealm' | 'kerberosConfigFile' | 'kerberosKeytabFile' | 'kerberosCredentialCache';

/** A text setting: empty clears it. */
export function TextField(p: FieldText & { edit: SettingsEdit; setting: TextSetting }) {
  return (
    <SettingInput
      {...p}
      value={p.edit.jsonData[p.setting]}
      onValue={(text) => p.edit.setJson({ [p.setting]: textSetting(text) })}
    />
  );
}
