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
export function datasourceOf(request: DataQueryRequest | undefined): DataSourceRef | null {
  const target = request?.targets?.find((t) => t.datasource?.uid);
  const ds = target?.datasource;
  return ds?.uid ? { uid: ds.uid, type: ds.type } : null;
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

export function viewFetcher(ds: DataSourceRef, traceId: string): ViewFetcher {
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
