import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { DataQueryRequest } from '@grafana/data';
import { getDataSourceSrv } from '@grafana/runtime';
import { DataSourceRef } from '@grafana/schema';
import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { DatasourceLookup, datasourceOf, viewFetcher } from '../detailSource';
import { DrawStats, recordDetail } from '../replay/debug';
import { buildPyramid, Pyramid } from '../replay/density';
import { Detail, DetailCache, needsDetail } from '../replay/detail';
import { advance } from '../replay/clock';
import { ReplayStore } from '../replay/store';

/**
 * The lanes a replay draws, as hooks shared by the replay and the compare
 * view: a density pyramid per large lane (built on first use), zoomed-in
 * detail fetched with `view` queries (to the datasource useViewDatasource
 * picks) when the window needs finer rows than the frames have, and the
 * playback loop.
 */

/** Lanes with more rows than this get a density pyramid for drawing. */
const PYRAMID_MIN_ROWS = 8192;

export interface LaneSourceArgs {
  trace: ReplayTrace;
  bounds: WindowUs;
  store: ReplayStore;
  /** The event lanes shown (detail is fetched for these). */
  lanes: EventLaneName[];
  plotW: number;
  /** The datasource to ask for detail; null (or fetchDetail false) draws the frames alone. */
  ds: DataSourceRef | null;
  fetchDetail: boolean;
  stats: DrawStats;
  /** The picked statement (docs/frames.md §3.13) the detail is asked for; undefined: the frames' own. */
  statement?: number;
}

export interface LaneSource {
  /** The lanes to draw for a window: zoomed-in detail where it has arrived, else the base frames. */
  lanesFor: (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;
  pyramid: (lane: LaneData) => Pyramid | null;
  /** Changes when new detail arrives. */
  detailVersion: number;
  detailStatus: { loading: boolean; error: string | null };
}

export function useLanes({
  trace,
  bounds,
  store,
  lanes,
  plotW,
  ds,
  fetchDetail,
  stats,
  statement,
}: LaneSourceArgs): LaneSource {
  const pyramids = useRef(new WeakMap<LaneData, Pyramid | null>());
  const pyramid = useCallback(
    (lane: LaneData): Pyramid | null => {
      if (lane.n < PYRAMID_MIN_ROWS) {
        return null;
      }
      if (!pyramids.current.has(lane)) {
        pyramids.current.set(lane, buildPyramid(lane, trace.lanes[lane.name] === lane ? bounds : lane.window));
      }
      return pyramids.current.get(lane) ?? null;
    },
    [trace, bounds]
  );

  const [detailVersion, setDetailVersion] = useState(0);
  const [detailStatus, setDetailStatus] = useState<{ loading: boolean; error: string | null }>({
    loading: false,
    error: null,
  });
  const detail = useMemo(() => {
    const fetcher = fetchDetail && ds && trace.traceId ? viewFetcher(ds, trace.traceId, statement) : null;
    const cache: DetailCache = new DetailCache(fetcher, (d: Detail | null) => {
      if (d) {
        recordDetail(stats, d.window, d.lanes);
        setDetailVersion((v) => v + 1);
      }
      setDetailStatus({ loading: cache.loading, error: cache.error });
    });
    return cache;
    // ds is compared by uid: a new object each render must not drop the cache
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [trace, fetchDetail, ds?.uid, stats]);
  useEffect(() => () => detail.dispose(), [detail]);

  const lanesFor = useCallback(
    (w: WindowUs): Partial<Record<EventLaneName, LaneData>> => {
      const d = detail.lookup(w, plotW);
      if (!d) {
        return trace.lanes;
      }
      const out: Partial<Record<EventLaneName, LaneData>> = { ...trace.lanes };
      for (const [k, lane] of Object.entries(d.lanes) as Array<[EventLaneName, LaneData | undefined]>) {
        const base = trace.lanes[k];
        // detail replaces a lane only where it is finer than the base
        if (lane && (!base || base.binned)) {
          out[k] = lane;
        }
      }
      return out;
    },
    // detailVersion: new detail changes the answer
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [detail, trace, plotW, detailVersion]
  );

  useEffect(() => {
    const check = () => {
      const w = store.get().window;
      if (needsDetail(trace, lanes, w, plotW)) {
        detail.request(w, plotW, bounds);
      }
    };
    check();
    let last = store.get().window;
    return store.subscribe(() => {
      const w = store.get().window;
      if (w !== last) {
        last = w;
        check();
      }
    });
  }, [store, detail, trace, lanes, plotW, bounds]);

  return { lanesFor, pyramid, detailVersion, detailStatus };
}

/** Whether the store is playing, as React state. */
export function useSyncPlaying(store: ReplayStore): boolean {
  const [playing, setPlaying] = useState(store.get().playing);
  useEffect(() => store.subscribe(() => setPlaying(store.get().playing)), [store]);
  return playing;
}

/** Moves the playhead once per animation frame while the store is playing; returns whether it is. */
export function usePlayback(store: ReplayStore): boolean {
  const playing = useSyncPlaying(store);
  useEffect(() => {
    if (!playing) {
      return;
    }
    let last = performance.now();
    let id = requestAnimationFrame(function tick(now: number) {
      const s = store.get();
      const r = advance(s.playheadUs, now - last, s.window, s.speed);
      last = now;
      store.set({ playheadUs: r.playheadUs, playing: !r.ended });
      if (!r.ended) {
        id = requestAnimationFrame(tick);
      }
    });
    return () => cancelAnimationFrame(id);
  }, [playing, store]);
  return playing;
}

/**
 * The datasource the panel's `view` queries go to (datasourceOf: the query's
 * own, template variables resolved, else the panel's), the same object while
 * the request is.
 */
export function useViewDatasource(request: DataQueryRequest | undefined): DataSourceRef | null {
  return useMemo(() => datasourceOf(request, grafanaDatasources()), [request]);
}

/** Grafana's DataSourceSrv, or null where there is none (tests, the browser harness). */
function grafanaDatasources(): DatasourceLookup | null {
  try {
    return getDataSourceSrv();
  } catch {
    return null;
  }
}
