import { DataFrame, DataQueryRequest } from '@grafana/data';
import { DataSourceRef } from '@grafana/schema';
import { FetchError, getBackendSrv, toDataQueryResponse } from '@grafana/runtime';
import { lastValueFrom } from 'rxjs';
import { WindowUs } from './model/trace';
import { ViewFetcher } from './replay/detail';

/**
 * The panel's own `view` queries (docs/frames.md §1): POST /api/ds/query to
 * the datasource that produced the frames, and the response converted with
 * @grafana/runtime's toDataQueryResponse, exactly as Grafana converts the
 * panel's own query results.
 */
/** The datasource plugin whose frames the panel replays (src/datasource/plugin.json). */
export const DATASOURCE_TYPE = 'queryreplay-sqlserver-datasource';

/** Looks a datasource up as Grafana's DataSourceSrv does (injected: tests and the browser harness have none). */
export interface DatasourceLookup {
  /** The settings of ref (template variables interpolated); null/undefined ref: the default datasource. */
  getInstanceSettings(ref?: DataSourceRef | string | null): { uid: string; type: string } | undefined;
  getList(filters?: { type?: string }): Array<{ uid: string; type: string }>;
}

/**
 * The datasource the panel's `view` queries go to: the query's own
 * (`data.request.targets[].datasource`, a template variable such as
 * `${ds}` resolved through the lookup); when no target names one, the
 * panel's datasource — which for a panel that names none is the
 * dashboard's default, so the default is taken when it is a QueryReplay
 * datasource — and failing that the only QueryReplay datasource there is.
 * Null when none can be told (zooming then stays on the binned frames).
 */
export function datasourceOf(
  request: DataQueryRequest | undefined,
  lookup?: DatasourceLookup | null
): DataSourceRef | null {
  const target = request?.targets?.find((t) => t.datasource?.uid);
  const ds = target?.datasource;
  if (ds?.uid) {
    if (ds.uid.includes('$') && lookup) {
      const s = safe(() => lookup.getInstanceSettings(ds));
      return s ? { uid: s.uid, type: s.type } : null;
    }
    return { uid: ds.uid, type: ds.type };
  }
  if (!lookup) {
    return null;
  }
  const def = safe(() => lookup.getInstanceSettings(null));
  if (def?.type === DATASOURCE_TYPE) {
    return { uid: def.uid, type: def.type };
  }
  const ours = safe(() => lookup.getList({ type: DATASOURCE_TYPE })) ?? [];
  return ours.length === 1 ? { uid: ours[0].uid, type: ours[0].type } : null;
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** The query type of the request's first query ('trace' when it names none). */
export function queryTypeOf(request: DataQueryRequest | undefined): string {
  const t = request?.targets?.[0] as { queryType?: string } | undefined;
  return t?.queryType || 'trace';
}

function message(e: unknown): string {
  const fe = e as Partial<FetchError<{ message?: string; results?: Record<string, { error?: string }> }>>;
  const fromResults = fe.data?.results ? Object.values(fe.data.results).find((r) => r.error)?.error : undefined;
  return (
    fromResults ?? fe.data?.message ?? (e instanceof Error ? e.message : `request failed (${fe.status ?? 'no status'})`)
  );
}

/** statement: the picked node of the statement tree (§3.13), so the detail is that statement's events. */
export function viewFetcher(ds: DataSourceRef, traceId: string, statement?: number): ViewFetcher {
  return async (window: WindowUs, maxDataPoints: number, signal: AbortSignal): Promise<DataFrame[]> => {
    const refId = 'QR_VIEW';
    const body = {
      queries: [
        {
          refId,
          datasource: ds,
          queryType: 'view',
          traceId,
          window: { fromUs: Math.floor(window.fromUs), toUs: Math.ceil(window.toUs) },
          frames: ['lanes'],
          maxDataPoints,
          ...(statement === undefined ? {} : { statement }),
        },
      ],
    };
    try {
      const obs = getBackendSrv().fetch({
        url: '/api/ds/query',
        method: 'POST',
        data: body,
        requestId: `queryreplay-view-${traceId}`,
        showErrorAlert: false,
      });
      const abort = new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('aborted')))
      );
      const res = await Promise.race([lastValueFrom(obs), abort]);
      const parsed = toDataQueryResponse(res as Parameters<typeof toDataQueryResponse>[0], [{ refId }]);
      if (parsed.errors?.length) {
        throw new Error(parsed.errors[0].message ?? 'view query failed');
      }
      return parsed.data as DataFrame[];
    } catch (e) {
      throw new Error(`zoomed-in detail: ${message(e)}`);
    }
  };
}

/**
 * Fetches the frames of one statement of a stored trace: a `bundle` query
 * with the `statement` field (docs/frames.md §1, §3.13), which draws that
 * statement's own operators, phases and events. Nothing runs on SQL Server.
 */
export async function fetchStatement(ds: DataSourceRef, traceId: string, statement: number): Promise<DataFrame[]> {
  const refId = 'QR_STATEMENT';
  const body = { queries: [{ refId, datasource: ds, queryType: 'bundle', traceId, statement }] };
  try {
    const obs = getBackendSrv().fetch({
      url: '/api/ds/query',
      method: 'POST',
      data: body,
      requestId: `queryreplay-statement-${traceId}`,
      showErrorAlert: false,
    });
    const parsed = toDataQueryResponse((await lastValueFrom(obs)) as Parameters<typeof toDataQueryResponse>[0], [
      { refId },
    ]);
    if (parsed.errors?.length) {
      throw new Error(parsed.errors[0].message ?? 'statement query failed');
    }
    return parsed.data as DataFrame[];
  } catch (e) {
    throw new Error(`statement ${statement}: ${message(e)}`);
  }
}
