import React, { useCallback, useEffect, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, QueryEditorProps } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import {
  Alert,
  Button,
  Checkbox,
  CodeEditor,
  Combobox,
  ComboboxOption,
  InlineField,
  InlineFieldRow,
  InlineSwitch,
  Input,
  RadioButtonGroup,
  Tooltip,
  useStyles2,
} from '@grafana/ui';
import { ReplayDataSource } from '../datasource';
import { CompareForm, SavedTrace } from './CompareForm';
import { HealthReport, OptionGate, coldCacheGate, readAheadGate } from '../health';
import { EVENT_GROUPS, EventGroup, QueryType, ReplayDataSourceOptions, ReplayQuery, TraceOptions } from '../types';

type Props = QueryEditorProps<ReplayDataSource, ReplayQuery, ReplayDataSourceOptions>;

/** GET resources/databases (docs/frames.md §5). */
interface Database {
  name: string;
  databaseId: number;
  state: string;
}

const MODES: Array<{ label: string; value: QueryType; description: string }> = [
  {
    label: 'Trace a query',
    value: 'trace' as const,
    description: 'run the batch inside a private Extended Events session',
  },
  { label: 'Saved trace', value: 'bundle', description: 'open a stored or uploaded trace' },
  { label: 'Compare', value: 'compare', description: 'two saved traces, operator by operator' },
  {
    label: 'Probe (alerts)',
    value: 'probe' as const,
    description: 'a read-only traced probe returning numbers for alert rules',
  },
];

const GROUP_LABEL: Record<EventGroup, string> = {
  locks: 'Locks',
  waits: 'Waits',
  memory: 'Memory & spills',
  splits: 'Page splits',
  log: 'Log records',
  fileIO: 'File I/O',
};

/** Trace id of an uploaded bundle (POST resources/traces). */
interface Uploaded {
  traceId: string;
}

/** Reads a bundle file: JSON, or gzip JSON decompressed in the browser. */
export async function readBundleFile(file: Pick<Blob, 'arrayBuffer'>): Promise<unknown> {
  let bytes: Uint8Array = new Uint8Array(await file.arrayBuffer());
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    bytes = await gunzip(bytes);
  }
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`not a QueryReplay bundle (JSON or gzip JSON): ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function gunzip(gz: Uint8Array): Promise<Uint8Array> {
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(gz);
      c.close();
    },
  });
  const reader = input
    .pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)
    .getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    parts.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function errorText(e: unknown): string {
  const fe = e as { data?: { error?: string; message?: string }; message?: string; status?: number };
  return fe.data?.error ?? fe.data?.message ?? fe.message ?? `request failed (${fe.status ?? 'no status'})`;
}

/**
 * A trace option's switch that the server may refuse: disabled, with the
 * reason in its tooltip and beside it, when the health check says the
 * trace would be refused. A query that already asks for it can still turn
 * it off.
 */
function GatedSwitch(p: {
  id: string;
  label: string;
  tooltip: string;
  gate: OptionGate;
  value: boolean;
  onChange: (v: boolean) => void;
}) {
  const styles = useStyles2(getStyles);
  const refused = !p.gate.allowed;
  const toggle = (
    <InlineSwitch
      id={p.id}
      value={p.value}
      disabled={refused && !p.value}
      onChange={(e) => p.onChange(e.currentTarget.checked)}
    />
  );
  return (
    <InlineField
      label={p.label}
      labelWidth={14}
      tooltip={refused ? `Not available: ${p.gate.reason}` : p.tooltip}
      disabled={refused && !p.value}
    >
      <div className={styles.gated}>
        {refused ? (
          // a disabled input gets no pointer events: the tooltip hangs on a focusable wrapper
          <Tooltip content={`Not available: ${p.gate.reason}`} placement="top">
            <span tabIndex={0} data-testid={`${p.id}-why`}>
              {toggle}
            </span>
          </Tooltip>
        ) : (
          toggle
        )}
        {refused && (
          <span className={styles.refused} data-testid={`${p.id}-refused`}>
            {p.value ? `refused: ${p.gate.reason}; turn it off` : 'not available here'}
          </span>
        )}
      </div>
    </InlineField>
  );
}

/**
 * The query editor: T-SQL in Grafana's code editor, the database from the
 * server's list, the trace options the data source's settings allow, an
 * Execute button, the saved traces, and uploading a bundle file.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource }: Props) {
  const styles = useStyles2(getStyles);
  const settings = datasource.settings ?? {};
  const mode = (['bundle', 'probe', 'compare'] as const).find((m) => m === query.queryType) ?? 'trace';
  const opts: TraceOptions = query.options ?? {};
  const setOpts = (patch: Partial<TraceOptions>) => onChange({ ...query, options: { ...opts, ...patch } });
  const [databases, setDatabases] = useState<Array<ComboboxOption<string>>>([]);
  const [dbError, setDbError] = useState<string | null>(null);
  const [traces, setTraces] = useState<SavedTrace[] | null>(null);
  const [traceError, setTraceError] = useState<string | null>(null);
  const [upload, setUpload] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    datasource
      .getResource<Database[]>('databases')
      .then((list) => live && setDatabases(list.map((d) => ({ label: d.name, value: d.name, description: d.state }))))
      .catch((e) => live && setDbError(errorText(e)));
    return () => {
      live = false;
    };
  }, [datasource]);

  const loadTraces = useCallback(() => {
    datasource
      .getResource<SavedTrace[]>('traces')
      .then((t) => {
        setTraces(t);
        setTraceError(null);
      })
      .catch((e) => setTraceError(errorText(e)));
  }, [datasource]);
  useEffect(() => loadTraces(), [loadTraces]);

  // what the server is and whether the login is a sysadmin decide which options can work
  const [health, setHealth] = useState<HealthReport | null>(null);
  useEffect(() => {
    let live = true;
    datasource
      .health()
      .then((h) => live && setHealth(h))
      .catch(() => live && setHealth(null));
    return () => {
      live = false;
    };
  }, [datasource]);
  const coldCache = coldCacheGate(settings, health);
  const readAhead = readAheadGate(health);

  const open = (traceId: string) => {
    onChange({ ...query, queryType: 'bundle', traceId });
    onRunQuery();
  };
  const remove = async (traceId: string) => {
    try {
      await getBackendSrv().delete(`/api/datasources/uid/${datasource.uid}/resources/traces/${traceId}`, undefined, {
        showErrorAlert: false,
      });
      loadTraces();
    } catch (e) {
      setTraceError(errorText(e));
    }
  };
  const onFile = async (file: File | undefined) => {
    if (!file) {
      return;
    }
    setUpload(`uploading ${file.name}…`);
    try {
      const bundle = await readBundleFile(file);
      const r = await datasource.postResource<Uploaded>('traces', bundle);
      setUpload(`uploaded ${file.name} as trace ${r.traceId}`);
      loadTraces();
      open(r.traceId);
    } catch (e) {
      setUpload(`${file.name}: ${errorText(e)}`);
    }
  };

  const groups = opts.events ?? EVENT_GROUPS;
  return (
    <div className={styles.editor} data-testid="qr-query-editor">
      <InlineFieldRow>
        <InlineField label="Mode" labelWidth={14}>
          <RadioButtonGroup<QueryType>
            options={MODES}
            value={mode}
            onChange={(v) => onChange({ ...query, queryType: v })}
          />
        </InlineField>
        <Button icon="play" onClick={onRunQuery} data-testid="qr-execute" className={styles.execute}>
          Execute
        </Button>
      </InlineFieldRow>

      {mode === 'compare' && <CompareForm query={query} traces={traces} onChange={onChange} />}

      {(mode === 'trace' || mode === 'probe') && (
        <>
          <div className={styles.code} data-testid="qr-sql">
            <CodeEditor
              language="sql"
              value={query.sql ?? ''}
              height={160}
              showLineNumbers
              showMiniMap={false}
              onBlur={(sql) => onChange({ ...query, sql })}
              onSave={(sql) => {
                onChange({ ...query, sql });
                onRunQuery();
              }}
            />
          </div>
          <p className={styles.help}>
            One batch, no GO. It runs inside a private Extended Events session filtered to its own session id.
            {settings.allowModifications
              ? ' INSERT, UPDATE and DELETE run in a transaction that is always rolled back.'
              : ' INSERT, UPDATE and DELETE are refused by this data source (allowModifications is off).'}
            {mode === 'probe' ? ' A probe never modifies data.' : ''} Ctrl/Cmd+S runs it.
          </p>
          <InlineFieldRow>
            <InlineField
              label="Database"
              labelWidth={14}
              tooltip="Empty: the data source's default database"
              error={dbError}
              invalid={!!dbError}
            >
              <Combobox
                id="qr-query-database"
                options={databases}
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
                onChange={(e) =>
                  setOpts({ timeoutSeconds: e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value) })
                }
              />
            </InlineField>
            <InlineField
              label="Event cap"
              labelWidth={12}
              tooltip="Events for this trace; never above the data source's cap"
            >
              <Input
                id="qr-max-events"
                type="number"
                width={12}
                value={opts.maxEvents ?? ''}
                onChange={(e) =>
                  setOpts({ maxEvents: e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value) })
                }
              />
            </InlineField>
          </InlineFieldRow>
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
                    onChange={(e) =>
                      setOpts({
                        events: e.currentTarget.checked
                          ? EVENT_GROUPS.filter((x) => x === g || groups.includes(x))
                          : groups.filter((x) => x !== g),
                      })
                    }
                  />
                ))}
              </div>
            </InlineField>
          </InlineFieldRow>
          <InlineFieldRow>
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
                gate={coldCache}
                value={!!opts.clearBufferPool}
                onChange={(v) => setOpts({ clearBufferPool: v })}
              />
            )}
            <GatedSwitch
              id="qr-noreadahead"
              label="No read-ahead"
              tooltip="Trace flag 652 for the session during the run, always turned off again"
              gate={readAhead}
              value={!!opts.disableReadAhead}
              onChange={(v) => setOpts({ disableReadAhead: v })}
            />
          </InlineFieldRow>
        </>
      )}

      {mode === 'bundle' && (
        <InlineField
          label="Trace id"
          labelWidth={14}
          tooltip="32 lower-case hex digits; pick one below or upload a bundle"
        >
          <Input
            id="qr-trace-id"
            width={40}
            value={query.traceId ?? ''}
            onChange={(e) => onChange({ ...query, traceId: e.currentTarget.value.trim() })}
          />
        </InlineField>
      )}

      <section className={styles.saved} data-testid="qr-saved-traces">
        <div className={styles.savedBar}>
          <strong>Saved traces</strong>
          <Button size="sm" variant="secondary" icon="sync" onClick={loadTraces}>
            Refresh
          </Button>
          <label className={styles.upload}>
            <input
              type="file"
              accept=".json,.gz,application/json,application/gzip"
              data-testid="qr-upload"
              onChange={(e) => onFile(e.currentTarget.files?.[0])}
            />
            <span>Upload bundle…</span>
          </label>
          {upload && (
            <span className={styles.help} data-testid="qr-upload-status">
              {upload}
            </span>
          )}
        </div>
        {traceError && <Alert severity="warning" title={`Saved traces: ${traceError}`} />}
        {traces && traces.length === 0 && (
          <div className={styles.help}>No saved traces yet: every trace you run is kept here.</div>
        )}
        {traces && traces.length > 0 && (
          <table className={styles.table}>
            <thead>
              <tr>
                <th>started</th>
                <th>statement</th>
                <th>database</th>
                <th>events</th>
                <th>duration</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {traces.map((t) => (
                <tr key={t.traceId} className={t.traceId === query.traceId ? styles.current : undefined}>
                  <td>{new Date(t.startedAt).toLocaleString()}</td>
                  <td className={styles.statement} title={t.statement}>
                    {t.statement}
                  </td>
                  <td>{t.database}</td>
                  <td>{t.events.toLocaleString('en-US')}</td>
                  <td>{(t.durationUs / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} ms</td>
                  <td className={styles.actions}>
                    <Button
                      size="sm"
                      variant="secondary"
                      onClick={() => open(t.traceId)}
                      aria-label={`Open trace ${t.traceId}`}
                    >
                      Open
                    </Button>
                    <a
                      className={styles.link}
                      href={`/api/datasources/uid/${datasource.uid}/resources/traces/${t.traceId}/bundle`}
                      download
                    >
                      Download
                    </a>
                    <Button
                      size="sm"
                      variant="destructive"
                      fill="text"
                      icon="trash-alt"
                      onClick={() => remove(t.traceId)}
                      aria-label={`Delete trace ${t.traceId}`}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  editor: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  execute: css({ marginLeft: theme.spacing(1) }),
  code: css({ border: `1px solid ${theme.colors.border.weak}` }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, margin: 0 }),
  groups: css({ display: 'flex', gap: theme.spacing(2), alignItems: 'center', flexWrap: 'wrap', minHeight: 32 }),
  saved: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(0.5) }),
  savedBar: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center', flexWrap: 'wrap' }),
  upload: css({
    cursor: 'pointer',
    color: theme.colors.text.link,
    fontSize: theme.typography.bodySmall.fontSize,
    input: { width: 0.1, height: 0.1, opacity: 0, position: 'absolute' },
  }),
  table: css({
    borderCollapse: 'collapse',
    fontSize: theme.typography.bodySmall.fontSize,
    'th, td': { textAlign: 'left', padding: theme.spacing(0.25, 1, 0.25, 0), whiteSpace: 'nowrap' },
    th: { color: theme.colors.text.secondary, fontWeight: theme.typography.fontWeightMedium },
  }),
  statement: css({
    maxWidth: 420,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  current: css({ background: theme.colors.action.selected }),
  actions: css({ display: 'flex', gap: theme.spacing(1), alignItems: 'center' }),
  link: css({ color: theme.colors.text.link }),
  gated: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1) }),
  refused: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
});
