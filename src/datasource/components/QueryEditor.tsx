import React, { useCallback, useEffect, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, QueryEditorProps } from '@grafana/data';
import { getBackendSrv } from '@grafana/runtime';
import { Button, ComboboxOption, InlineField, InlineFieldRow, Input, RadioButtonGroup, useStyles2 } from '@grafana/ui';
import { ReplayDataSource } from '../datasource';
import { CompareForm, SavedTrace } from './CompareForm';
import { HealthReport, coldCacheGate, readAheadGate } from '../health';
import { QueryType, ReplayDataSourceOptions, ReplayQuery, runRequest } from '../types';
import { uploadBundleFile } from './query/bundleFile';
import { errorText, modeOf } from './query/options';
import { SqlSection, TraceOptionsSection } from './query/TraceQuery';
import { SavedTraces } from './query/SavedTraces';
import { OutputPicker } from './query/OutputPicker';

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

/**
 * The query editor: T-SQL in Grafana's code editor, the database from the
 * server's list, the trace options the data source's settings allow, an
 * Execute button, the saved traces, and uploading a bundle file.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource, data }: Props) {
  const styles = useStyles2(getStyles);
  const settings = datasource.settings ?? {};
  const mode = modeOf(query.queryType);
  const { databases, dbError } = useDatabases(datasource);
  const saved = useSavedTraces(datasource);
  const health = useHealth(datasource);
  const [upload, setUpload] = useState<string | null>(null);
  const execute = (q: ReplayQuery = query) => {
    // a trace runs only for a fresh run request: Execute is the ask (runonce.go)
    onChange(modeOf(q.queryType) === 'trace' ? { ...q, run: runRequest() } : q);
    onRunQuery();
  };
  useRememberTrace(query, data, onChange);

  const open = (traceId: string) => {
    onChange({ ...query, queryType: 'bundle', traceId });
    onRunQuery();
  };
  const onFile = async (file: File | undefined) => {
    if (!file) {
      return;
    }
    setUpload(`uploading ${file.name}…`);
    try {
      const r = await uploadBundleFile(datasource.uid, file);
      setUpload(`uploaded ${file.name} as trace ${r.traceId}`);
      saved.reload();
      open(r.traceId);
    } catch (e) {
      setUpload(`${file.name}: ${errorText(e)}`);
    }
  };

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
        <Button icon="play" onClick={() => execute()} data-testid="qr-execute" className={styles.execute}>
          Execute
        </Button>
      </InlineFieldRow>

      {mode === 'compare' && <CompareForm query={query} traces={saved.traces} onChange={onChange} />}

      {(mode === 'trace' || mode === 'probe') && (
        <>
          <SqlSection
            query={query}
            probe={mode === 'probe'}
            settings={settings}
            onChange={onChange}
            onExecute={execute}
          />
          <TraceOptionsSection
            query={query}
            settings={settings}
            databases={databases}
            dbError={dbError}
            coldCache={coldCacheGate(settings, health)}
            readAhead={readAheadGate(health)}
            liveOption={mode === 'trace'}
            onChange={onChange}
          />
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

      {(mode === 'trace' || mode === 'bundle') && <OutputPicker query={query} data={data} onChange={onChange} />}

      <SavedTraces
        uid={datasource.uid}
        traces={saved.traces}
        error={saved.error}
        upload={upload}
        currentId={query.traceId}
        onRefresh={saved.reload}
        onFile={onFile}
        onOpen={open}
        onDelete={saved.remove}
      />
    </div>
  );
}

/**
 * Once a run's frames arrive, the query keeps their trace id, so that the
 * saved dashboard opens the stored trace after its run request has aged.
 */
function useRememberTrace(query: ReplayQuery, data: Props['data'], onChange: (q: ReplayQuery) => void) {
  const custom = data?.series.find((f) => (f.refId ?? query.refId) === query.refId)?.meta?.custom;
  const traceId = typeof custom?.traceId === 'string' ? custom.traceId : undefined;
  useEffect(() => {
    if (traceId && query.run && modeOf(query.queryType) === 'trace' && traceId !== query.traceId) {
      onChange({ ...query, traceId });
    }
  }, [traceId, query, onChange]);
}

/** The server's databases for the database picker (GET resources/databases), or why there are none. */
function useDatabases(datasource: ReplayDataSource) {
  const [databases, setDatabases] = useState<Array<ComboboxOption<string>>>([]);
  const [dbError, setDbError] = useState<string | null>(null);
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
  return { databases, dbError };
}

/** The saved traces (GET resources/traces), reloaded on demand, and deleting one. */
function useSavedTraces(datasource: ReplayDataSource) {
  const [traces, setTraces] = useState<SavedTrace[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    datasource
      .getResource<SavedTrace[]>('traces')
      .then((t) => {
        setTraces(t);
        setError(null);
      })
      .catch((e) => setError(errorText(e)));
  }, [datasource]);
  useEffect(() => reload(), [reload]);
  const remove = async (traceId: string) => {
    try {
      await getBackendSrv().delete(`/api/datasources/uid/${datasource.uid}/resources/traces/${traceId}`, undefined, {
        showErrorAlert: false,
      });
      reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return { traces, error, reload, remove };
}

/** What the server is and whether the login is a sysadmin: they decide which options can work. */
function useHealth(datasource: ReplayDataSource): HealthReport | null {
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
  return health;
}

const getStyles = (theme: GrafanaTheme2) => ({
  editor: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
  execute: css({ marginLeft: theme.spacing(1) }),
});
