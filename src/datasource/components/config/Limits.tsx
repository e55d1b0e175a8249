import React from 'react';
import { FieldSet, InlineField, InlineSwitch, RadioButtonGroup } from '@grafana/ui';
import { ReplayDataSourceOptions, TRACE_ROLES, TraceRole } from '../../types';
import { LABEL_W, NumberField, SettingInput, SettingsEdit } from './edit';
import { durationSetting } from './fields';

/** Concurrency, the queue and trace timeouts and the event cap. */
export function LimitsSection({ edit }: { edit: SettingsEdit }) {
  return (
    <FieldSet label="Limits">
      <NumberField
        edit={edit}
        setting="maxConcurrentTraces"
        id="qr-max-concurrent"
        label="Concurrent traces"
        tooltip="Traces and probes running at once on this data source (1-32, default 2); more wait in a queue"
        placeholder="2"
      />
      <DurationField
        edit={edit}
        setting="traceQueueTimeout"
        id="qr-queue-timeout"
        label="Queue timeout"
        tooltip="How long an extra trace waits for a slot before it is refused (status 429): seconds or a duration such as 30s"
        placeholder="30s"
      />
      <DurationField
        edit={edit}
        setting="traceTimeout"
        id="qr-trace-timeout"
        label="Trace timeout"
        tooltip="A trace never outlives it (query and read-back; the session is always dropped after): seconds or a duration such as 5m"
        placeholder="5m"
      />
      <NumberField
        edit={edit}
        setting="maxEvents"
        id="qr-max-events"
        label="Event cap"
        tooltip="Events read back per trace (default 1,000,000); a capped trace says it is truncated"
        placeholder="1000000"
      />
      <NumberField
        edit={edit}
        setting="maxQueryMB"
        id="qr-max-query"
        label="Query size (MB)"
        tooltip="Largest query JSON accepted, the batch text included (default 4, at most 256); a larger one is refused before it is read"
        placeholder="4"
      />
    </FieldSet>
  );
}

/** Seconds, or a duration string such as 30s (durationSetting). */
function DurationField(p: {
  edit: SettingsEdit;
  setting: keyof Pick<ReplayDataSourceOptions, 'traceQueueTimeout' | 'traceTimeout'>;
  id: string;
  label: string;
  tooltip: string;
  placeholder: string;
}) {
  return (
    <SettingInput
      {...p}
      value={p.edit.jsonData[p.setting]}
      onValue={(text) => p.edit.setJson({ [p.setting]: durationSetting(text) })}
    />
  );
}

/** The switches that let a trace do more than read: a cold cache, modifications rolled back. */
export function SafetySection({ edit: { jsonData, setJson } }: { edit: SettingsEdit }) {
  return (
    <FieldSet label="Safety">
      <InlineField
        label="Lowest role that may trace"
        labelWidth={LABEL_W}
        tooltip="Grafana lets every Viewer query a data source; this decides who may run SQL through its login (traces, probes) and see every user's traces. Alerting's scheduler may always run probes. See docs/security.md."
      >
        <RadioButtonGroup<TraceRole>
          id="qr-min-trace-role"
          options={TRACE_ROLES.map((r) => ({ label: r, value: r }))}
          value={jsonData.minTraceRole ?? 'Editor'}
          onChange={(v) => setJson({ minTraceRole: v })}
        />
      </InlineField>
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
  );
}
