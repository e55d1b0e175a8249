import React, { useCallback, useEffect, useState } from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import { Alert, Button, Checkbox, ComboboxOption, TextArea, useStyles2 } from '@grafana/ui';
import { lastValueFrom } from 'rxjs';
import { CompareForm, SavedTrace } from '../datasource/components/CompareForm';
import { SavedTraces } from '../datasource/components/query/SavedTraces';
import { TraceOptionsSection } from '../datasource/components/query/TraceQuery';
import { uploadBundleFile } from '../datasource/components/query/bundleFile';
import { errorText } from '../datasource/components/query/options';
import { HealthReport, coldCacheGate, readAheadGate } from '../datasource/health';
import { DEFAULT_QUERY, ReplayDataSourceOptions, ReplayQuery, isRunnable, runRequest } from '../datasource/types';
import { fileTooLarge, queryTitle } from './tool';

/**
 * The local viewer's own tools (queryreplay view and demo, pkg/viewer):
 * run a query with its options, list and open the stored traces, compare
 * two of them, and open a bundle file from disk. It reuses the query
 * editor's parts (trace options, saved traces, compare form, upload) over
 * the same datasource resources Grafana's editor calls; nothing here runs
 * SQL except the Run button, which makes a fresh run request
 * (pkg/plugin/runonce.go), so reloading the page never runs a batch again.
 */

type Tab = 'run' | 'traces' | 'compare';

export interface ViewerToolProps {
  uid: string;
  /** The datasource settings the page may read (pkg/viewer pageSettings). */
  settings: ReplayDataSourceOptions;
  /** The viewer's request bound: larger bundle files are refused before sending. */
  maxUploadBytes: number;
  /** The query the panel shows now. */
  current: Record<string, unknown>;
  /** Shows a query in the panel; a trace query already carries its run request. */
  onShow: (q: ReplayQuery, title: string) => void;
}

/** GET resources/databases (docs/frames.md §5). */
interface Database {
  name: string;
  state: string;
}

function resourceURL(uid: string, path: string): string {
  return `/api/datasources/uid/${encodeURIComponent(uid)}/resources/${path}`;
}

async function call<T>(url: string, method = 'GET'): Promise<T> {
  const res = await lastValueFrom(getBackendSrv().fetch<T>({ url, method }));
  return res.data;
}

export function ViewerTool(p: ViewerToolProps) {
  const styles = useStyles2(getStyles);
  const [tab, setTab] = useState<Tab | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const saved = useSavedTraces(p.uid);
  const toggle = (t: Tab) => setTab((cur) => (cur === t ? null : t));
  const show = (q: ReplayQuery, title: string) => {
    setTab(null);
    p.onShow(q, title);
  };
  const onFile = async (file: File | undefined) => {
    if (!file) {
      return;
    }
    const tooLarge = fileTooLarge(file.size, p.maxUploadBytes);
    if (tooLarge) {
      setStatus(`${file.name}: ${tooLarge}`);
      return;
    }
    setStatus(`uploading ${file.name}…`);
    try {
      const r = await uploadBundleFile(p.uid, file);
      setStatus(`opened ${file.name} as trace ${r.traceId}`);
      saved.reload();
      show({ refId: 'A', queryType: 'bundle', traceId: r.traceId }, file.name);
    } catch (e) {
      setStatus(`${file.name}: ${errorText(e)}`);
    }
  };

  return (
    <div className={styles.tool} data-testid="viewer-tool" onKeyDown={(e) => e.key === 'Escape' && setTab(null)}>
      <div className={styles.bar}>
        <Button
          size="sm"
          icon="play"
          variant="secondary"
          className={cx(tab === 'run' && styles.open)}
          aria-expanded={tab === 'run'}
          onClick={() => toggle('run')}
          data-testid="viewer-tab-run"
        >
          Run a query
        </Button>
        <Button
          size="sm"
          icon="list-ul"
          variant="secondary"
          className={cx(tab === 'traces' && styles.open)}
          aria-expanded={tab === 'traces'}
          onClick={() => (saved.reload(), toggle('traces'))}
          data-testid="viewer-tab-traces"
        >
          Traces{saved.traces ? ` (${saved.traces.length})` : ''}
        </Button>
        <Button
          size="sm"
          icon="exchange-alt"
          variant="secondary"
          className={cx(tab === 'compare' && styles.open)}
          aria-expanded={tab === 'compare'}
          onClick={() => (saved.reload(), toggle('compare'))}
          data-testid="viewer-tab-compare"
        >
          Compare
        </Button>
        <label className={styles.file} title="Upload a trace bundle (.json or .json.gz) and open it">
          <input
            type="file"
            accept=".json,.gz,application/json,application/gzip"
            data-testid="viewer-open-file"
            onChange={(e) => {
              void onFile(e.currentTarget.files?.[0]);
              e.currentTarget.value = '';
            }}
          />
          <span>Open bundle file…</span>
        </label>
        {status && (
          <span className={styles.status} data-testid="viewer-status" title={status}>
            {status}
          </span>
        )}
      </div>
      {tab && (
        <div className={styles.drawer} data-testid={`viewer-drawer-${tab}`}>
          {tab === 'run' && <RunForm {...p} onRun={show} />}
          {tab === 'traces' && (
            <SavedTraces
              uid={p.uid}
              traces={saved.traces}
              error={saved.error}
              upload={null}
              currentId={typeof p.current.traceId === 'string' ? p.current.traceId : undefined}
              onRefresh={saved.reload}
              onFile={(f) => void onFile(f)}
              onOpen={(traceId) =>
                show(
                  { refId: 'A', queryType: 'bundle', traceId },
                  queryTitle(saved.traces?.find((t) => t.traceId === traceId)?.statement ?? traceId)
                )
              }
              onDelete={saved.remove}
            />
          )}
          {tab === 'compare' && <CompareTab traces={saved.traces} onCompare={show} />}
        </div>
      )}
    </div>
  );
}

/** The batch, the trace options the settings allow, and Run. */
function RunForm(p: ViewerToolProps & { onRun: (q: ReplayQuery, title: string) => void }) {
  const styles = useStyles2(getStyles);
  const [query, setQuery] = useState<ReplayQuery>(() => initialRunQuery(p.current));
  const { databases, dbError, health } = useServer(p.uid);
  const runnable = isRunnable({ ...query, queryType: 'trace' });
  const run = () =>
    runnable && p.onRun({ ...query, refId: 'A', queryType: 'trace', run: runRequest() }, queryTitle(query.sql ?? ''));
  return (
    <div className={styles.form}>
      {health && !health.ok && (
        <Alert severity="warning" title="Running traces needs a reachable server" data-testid="viewer-no-server">
          {health.message} Stored traces and bundle files still open.
        </Alert>
      )}
      <TextArea
        rows={5}
        className={styles.sql}
        placeholder="One T-SQL batch, no GO. Ctrl/Cmd+Enter runs it."
        value={query.sql ?? ''}
        data-testid="viewer-sql"
        aria-label="T-SQL batch"
        onChange={(e) => setQuery({ ...query, sql: e.currentTarget.value })}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            run();
          }
        }}
      />
      <p className={styles.help}>
        It runs once, inside a private Extended Events session filtered to its own session id, when you press Run;
        reloading the page shows the trace it made and never runs it again.
        {p.settings.allowModifications
          ? ' INSERT, UPDATE and DELETE run in a transaction that is always rolled back.'
          : ' INSERT, UPDATE and DELETE are refused (allowModifications is off).'}
      </p>
      <TraceOptionsSection
        query={query}
        settings={p.settings}
        databases={databases}
        dbError={dbError}
        coldCache={coldCacheGate(p.settings, health)}
        readAhead={readAheadGate(health)}
        onChange={setQuery}
      />
      <div>
        <Checkbox
          label="Live"
          description="Watch the operators and events while the query runs (the replay follows when it ends)"
          value={!!query.live}
          data-testid="viewer-live"
          onChange={(e) => setQuery({ ...query, live: e.currentTarget.checked || undefined })}
        />
      </div>
      <div>
        <Button icon="play" onClick={run} disabled={!runnable} data-testid="viewer-run">
          Run
        </Button>
      </div>
    </div>
  );
}

/** The run form starts from the trace query on screen (its batch and options), else empty. */
function initialRunQuery(current: Record<string, unknown>): ReplayQuery {
  const base: ReplayQuery = { refId: 'A', ...DEFAULT_QUERY };
  if ((current.queryType ?? 'trace') !== 'trace') {
    return base;
  }
  const { sql, database, options } = current as Partial<ReplayQuery>;
  return { ...base, sql, database, options: options ?? base.options };
}

/** Two stored traces, picked from the list, and Compare. */
function CompareTab(p: { traces: SavedTrace[] | null; onCompare: (q: ReplayQuery, title: string) => void }) {
  const [query, setQuery] = useState<ReplayQuery>({ refId: 'A', queryType: 'compare', traceIds: ['', ''] });
  const ok = isRunnable(query);
  return (
    <>
      <CompareForm query={query} traces={p.traces} onChange={setQuery} />
      <div>
        <Button
          icon="exchange-alt"
          disabled={!ok}
          data-testid="viewer-compare"
          onClick={() => p.onCompare({ ...query, refId: 'A' }, 'Compare A → B')}
        >
          Compare
        </Button>
      </div>
    </>
  );
}

/** The stored traces (GET resources/traces), reloaded on demand, and deleting one. */
function useSavedTraces(uid: string) {
  const [traces, setTraces] = useState<SavedTrace[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    call<SavedTrace[]>(resourceURL(uid, 'traces'))
      .then((t) => {
        setTraces(t ?? []);
        setError(null);
      })
      .catch((e) => setError(errorText(e)));
  }, [uid]);
  useEffect(() => reload(), [reload]);
  const remove = async (traceId: string) => {
    try {
      await call(resourceURL(uid, `traces/${encodeURIComponent(traceId)}`), 'DELETE');
      reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return { traces, error, reload, remove };
}

/** The server's databases and health, asked for when the run form opens (each connects to the server). */
function useServer(uid: string) {
  const [databases, setDatabases] = useState<Array<ComboboxOption<string>>>([]);
  const [dbError, setDbError] = useState<string | null>(null);
  const [health, setHealth] = useState<HealthReport | null>(null);
  useEffect(() => {
    let live = true;
    call<Database[]>(resourceURL(uid, 'databases'))
      .then((l) => live && setDatabases(l.map((d) => ({ label: d.name, value: d.name, description: d.state }))))
      .catch((e) => live && setDbError(errorText(e)));
    call<HealthReport>(resourceURL(uid, 'health'))
      .then((h) => live && setHealth(h))
      .catch((e) => live && setHealth({ ok: false, message: errorText(e) }));
    return () => {
      live = false;
    };
  }, [uid]);
  return { databases, dbError, health };
}

const getStyles = (theme: GrafanaTheme2) => ({
  tool: css({ flex: '0 1 auto', minWidth: 0, paddingRight: theme.spacing(1) }),
  // the open tool: marked by an underline in the theme's primary colour, not by a primary button (white on
  // Grafana's focused primary blue reads at 3.6:1 in the dark theme)
  open: css({ boxShadow: `inset 0 -2px 0 ${theme.colors.primary.main}`, color: theme.colors.text.primary }),
  bar: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), height: 32, minWidth: 0 }),
  file: css({
    cursor: 'pointer',
    color: theme.colors.text.link,
    fontSize: theme.typography.bodySmall.fontSize,
    whiteSpace: 'nowrap',
    input: { width: 0.1, height: 0.1, opacity: 0, position: 'absolute' },
    '&:focus-within': { outline: `2px solid ${theme.colors.primary.border}` },
  }),
  status: css({
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    whiteSpace: 'nowrap',
    minWidth: 0,
    maxWidth: 420,
  }),
  // over the panel, so that opening it does not resize the replay
  drawer: css({
    position: 'absolute',
    top: 34,
    right: theme.spacing(1),
    zIndex: theme.zIndex.dropdown,
    width: 'min(1100px, calc(100vw - 48px))',
    maxHeight: 'calc(100vh - 80px)',
    overflow: 'auto',
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(1),
    padding: theme.spacing(1.5),
    background: theme.colors.background.primary,
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.default,
    boxShadow: theme.shadows.z3,
    // Grafana's global styles make every box border-box; the viewer page
    // has none of them, and @grafana/ui's inputs overflow without it
    '&, & *, & *::before, & *::after': { boxSizing: 'border-box' },
  }),
  form: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  sql: css({ fontFamily: theme.typography.fontFamilyMonospace }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, margin: 0 }),
});
