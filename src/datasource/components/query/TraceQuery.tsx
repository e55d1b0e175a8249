import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import {
  Checkbox,
  CodeEditor,
  Combobox,
  ComboboxOption,
  InlineField,
  InlineFieldRow,
  InlineSwitch,
  Input,
  useStyles2,
} from '@grafana/ui';
import { OptionGate } from '../../health';
import { EVENT_GROUPS, EventGroup, ReplayDataSourceOptions, ReplayQuery, TraceOptions } from '../../types';
import { GatedSwitch } from './GatedSwitch';
import { optionalNumber, toggleGroup } from './options';

const GROUP_LABEL: Record<EventGroup, string> = {
  locks: 'Locks',
  waits: 'Waits',
  memory: 'Memory & spills',
  splits: 'Page splits',
  log: 'Log records',
  fileIO: 'File I/O',
};

/** The batch in Grafana's code editor (Ctrl/Cmd+S runs it) and what the data source does with it. */
export function SqlSection(p: {
  query: ReplayQuery;
  probe: boolean;
  settings: ReplayDataSourceOptions;
  onChange: (q: ReplayQuery) => void;
  /** Runs the query given (a trace gets a fresh run request). */
  onExecute: (q: ReplayQuery) => void;
}) {
  const styles = useStyles2(getStyles);
  return (
    <>
      <div className={styles.code} data-testid="qr-sql">
        <CodeEditor
          language="sql"
          value={p.query.sql ?? ''}
          height={160}
          showLineNumbers
          showMiniMap={false}
          onBlur={(sql) => p.onChange({ ...p.query, sql })}
          onSave={(sql) => p.onExecute({ ...p.query, sql })}
        />
      </div>
      <p className={styles.help}>
        One batch, no GO. It runs inside a private Extended Events session filtered to its own session id.
        {p.settings.allowModifications
          ? ' INSERT, UPDATE and DELETE run in a transaction that is always rolled back.'
          : ' INSERT, UPDATE and DELETE are refused by this data source (allowModifications is off).'}
        {p.probe ? ' A probe never modifies data.' : ''} Ctrl/Cmd+S runs it.
      </p>
    </>
  );
}

/** The database, the bounds, the event groups and the switches of one trace. */
export function TraceOptionsSection(p: {
  query: ReplayQuery;
  settings: ReplayDataSourceOptions;
  databases: Array<ComboboxOption<string>>;
  dbError: string | null;
  coldCache: OptionGate;
  readAhead: OptionGate;
  /** Offer the Live switch: trace queries only (a probe runs on schedule, nobody watches it). */
  liveOption?: boolean;
  onChange: (q: ReplayQuery) => void;
}) {
  const { query, settings, onChange } = p;
  const opts: TraceOptions = query.options ?? {};
  const setOpts = (patch: Partial<TraceOptions>) => onChange({ ...query, options: { ...opts, ...patch } });
  return (
    <>
      <InlineFieldRow>
        <InlineField
          label="Database"
          labelWidth={14}
          tooltip="Empty: the data source's default database"
          error={p.dbError}
          invalid={!!p.dbError}
        >
          <Combobox
            id="qr-query-database"
            options={p.databases}
            value={query.database ?? null}
            width={30}
            isClearable
            createCustomValue
            placeholder={settings.database ?? 'default database'}
            onChange={(o) => onChange({ ...query, database: o?.value || undefined })}
          />
        </InlineField>
        <InlineField
          label="Timeout (s)"
          labelWidth={14}
          tooltip="Bounds the traced query; never above the data source's trace timeout"
        >
          <Input
            id="qr-timeout"
            type="number"
            width={10}
            value={opts.timeoutSeconds ?? ''}
            onChange={(e) => setOpts({ timeoutSeconds: optionalNumber(e.currentTarget.value) })}
          />
        </InlineField>
        <InlineField
          label="Event cap"
          labelWidth="auto"
          tooltip="Events for this trace; never above the data source's cap"
        >
          <Input
            id="qr-max-events"
            type="number"
            width={12}
            value={opts.maxEvents ?? ''}
            onChange={(e) => setOpts({ maxEvents: optionalNumber(e.currentTarget.value) })}
          />
        </InlineField>
      </InlineFieldRow>
      <EventGroups groups={opts.events ?? EVENT_GROUPS} onChange={(events) => setOpts({ events })} />
      <InlineFieldRow>
        {p.liveOption && (
          <InlineField label="Live" labelWidth={14} tooltip={LIVE_TOOLTIP}>
            <InlineSwitch
              id="qr-live"
              value={!!query.live}
              onChange={(e) => onChange({ ...query, live: e.currentTarget.checked })}
            />
          </InlineField>
        )}
        <InlineField
          label="Call stacks"
          labelWidth={14}
          tooltip="Adds package0.callstack to storage events (larger events; resolved with the symbol servers)"
        >
          <InlineSwitch
            id="qr-callstacks"
            value={!!opts.callStacks}
            onChange={(e) => setOpts({ callStacks: e.currentTarget.checked })}
          />
        </InlineField>
        {settings.allowBufferPoolClear && (
          <GatedSwitch
            id="qr-clear"
            label="Cold cache"
            tooltip="CHECKPOINT + DBCC DROPCLEANBUFFERS before the run: empties the cache of the whole instance"
            gate={p.coldCache}
            value={!!opts.clearBufferPool}
            onChange={(v) => setOpts({ clearBufferPool: v })}
          />
        )}
        <GatedSwitch
          id="qr-noreadahead"
          label="No read-ahead"
          tooltip="Trace flag 652 for the session during the run, always turned off again"
          gate={p.readAhead}
          value={!!opts.disableReadAhead}
          onChange={(v) => setOpts({ disableReadAhead: v })}
        />
      </InlineFieldRow>
    </>
  );
}

/**
 * What Live does (docs/frames.md §3.14). Alert rules and expressions ignore
 * it: they run the trace to the end (pkg/plugin/live.go, liveWatched).
 */
export const LIVE_TOOLTIP =
  "Watch the trace while the query runs: the operators' progress (rows so far, reads), pages read and locks taken, " +
  'several times a second. When the query ends the finished replay replaces the live view. ' +
  'Alert rules and expressions ignore it and get the finished trace.';

/** A checkbox per optional event group. */
function EventGroups({ groups, onChange }: { groups: EventGroup[]; onChange: (g: EventGroup[]) => void }) {
  const styles = useStyles2(getStyles);
  return (
    <InlineFieldRow>
      <InlineField
        label="Events"
        labelWidth={14}
        tooltip="Page I/O, statements, the thread profile and the actual plan are always traced; these groups are optional"
      >
        <div className={styles.groups} data-testid="qr-event-groups">
          {EVENT_GROUPS.map((g) => (
            <Checkbox
              key={g}
              label={GROUP_LABEL[g]}
              value={groups.includes(g)}
              onChange={(e) => onChange(toggleGroup(groups, g, e.currentTarget.checked))}
            />
          ))}
        </div>
      </InlineField>
    </InlineFieldRow>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  code: css({ border: `1px solid ${theme.colors.border.weak}` }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, margin: 0 }),
  groups: css({ display: 'flex', gap: theme.spacing(2), alignItems: 'center', flexWrap: 'wrap', minHeight: 32 }),
});
