import { useCallback, useEffect, useMemo, useState } from 'react';
import { DataFrame, PanelData } from '@grafana/data';
import { DataSourceRef } from '@grafana/schema';
import { getBackendSrv, toDataQueryResponse } from '@grafana/runtime';
import { lastValueFrom } from 'rxjs';
import { useViewDatasource } from '../components/useLanes';
import { LiveSnapshot, liveFromFrames } from './model';

export interface LiveState {
  /** The live trace shown, null when the panel's data is not live. */
  snap: LiveSnapshot | null;
  /** The finished replay's frames, once the trace has ended and they were read. */
  series: DataFrame[] | null;
  /** While the finished replay is read, or why it could not be. */
  finishing: string | null;
  cancel: (() => void) | null;
}

/**
 * The panel's live trace: the snapshot of the live frame, Cancel (the
 * datasource's cancel resource), and, once the last frame says the trace is
 * stored, its finished frames — a `bundle` query by trace id, so the panel
 * switches to the replay without reloading.
 */
export function useLive(data: PanelData): LiveState {
  // keyed on data, not data.series: Grafana changes a StreamingDataFrame in place
  const snap = useMemo(() => liveFromFrames(data.series), [data]);
  const ds = useViewDatasource(data.request);
  const [finished, setFinished] = useState<{ traceId: string; series: DataFrame[] } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const traceId = snap?.status.done ? snap.status.traceId : undefined;
  useEffect(() => {
    if (!traceId || !ds || finished?.traceId === traceId) {
      return;
    }
    let current = true;
    fetchBundle(ds, traceId).then(
      (series) => current && setFinished({ traceId, series }),
      (e) => current && setFailed(`The trace ${traceId} is stored, but its replay could not be read: ${String(e)}`)
    );
    return () => {
      current = false;
    };
  }, [traceId, ds, finished]);
  const liveId = snap?.liveId;
  const cancel = useCallback(() => {
    if (ds && liveId) {
      void cancelLive(ds, liveId).catch(() => undefined);
    }
  }, [ds, liveId]);
  return {
    snap,
    series: traceId && finished?.traceId === traceId ? finished.series : null,
    finishing: traceId ? (failed ?? 'Finished — opening the replay…') : null,
    cancel: ds && liveId ? cancel : null,
  };
}

/** The stored trace's frames (a bundle query; nothing runs on SQL Server). */
export async function fetchBundle(ds: DataSourceRef, traceId: string): Promise<DataFrame[]> {
  const refId = 'A';
  const res = await lastValueFrom(
    getBackendSrv().fetch({
      url: '/api/ds/query',
      method: 'POST',
      data: { queries: [{ refId, datasource: ds, queryType: 'bundle', traceId }] },
      requestId: `queryreplay-live-${traceId}`,
      showErrorAlert: false,
    })
  );
  const parsed = toDataQueryResponse(res as Parameters<typeof toDataQueryResponse>[0], [{ refId }]);
  if (parsed.errors?.length) {
    throw new Error(parsed.errors[0].message ?? 'bundle query failed');
  }
  return parsed.data as DataFrame[];
}

/** POST resources/live/<id>/cancel: stops the query and drops its session (pkg/plugin live.go). */
export async function cancelLive(ds: DataSourceRef, liveId: string): Promise<void> {
  await lastValueFrom(
    getBackendSrv().fetch({
      url: `/api/datasources/uid/${encodeURIComponent(ds.uid ?? '')}/resources/live/${encodeURIComponent(liveId)}/cancel`,
      method: 'POST',
      data: {},
      showErrorAlert: false,
    })
  );
}
