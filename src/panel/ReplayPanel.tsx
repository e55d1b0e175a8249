import React, { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, LoadingState, PanelProps } from '@grafana/data';
import { Tab, TabsBar, useStyles2, useTheme2 } from '@grafana/ui';
import { getDataSourceSrv } from '@grafana/runtime';
import { EventLaneName, LaneName, isEventLane } from './model/lanes';
import { LaneData, ReplayTrace, WindowUs, traceFromFrames } from './model/trace';
import { advance, playFrom } from './replay/clock';
import { buildPyramid, Pyramid } from './replay/density';
import { Detail, DetailCache, needsDetail } from './replay/detail';
import { DebugPanel, debugRoot, newStats } from './replay/debug';
import { reveal, zoomAt } from './replay/scale';
import { stepTime, entryAt } from './replay/step';
import { ReplayStore } from './replay/store';
import { labelWidth } from './render/layout';
import { paletteFromTheme } from './render/palette';
import { DatasourceLookup, datasourceOf, viewFetcher } from './detailSource';
import { LinkedView, ReplayOptions, withDefaults } from './types';
import { TimelineView } from './components/TimelineView';
import { Scrubber } from './components/Scrubber';
import { Toolbar, ViewChoice } from './components/Toolbar';
import { PlanTree } from './components/PlanTree';
import { PageMap } from './components/PageMap';
import { LockList } from './components/LockList';
import { CallStackView } from './components/CallStackView';

const TOOLBAR_H = 32;
const SCRUBBER_H = 16;
/** Lanes with more rows than this get a density pyramid for drawing. */
const PYRAMID_MIN_ROWS = 8192;

type Props = PanelProps<ReplayOptions>;

/** The replay panel: reads the frames, then hands a trace to the replay (or says why there is none). */
export function ReplayPanel(props: Props) {
  const { data, width, height } = props;
  const styles = useStyles2(getStyles);
  const result = useMemo(() => traceFromFrames(data.series), [data.series]);
  if (!result.trace) {
    const loading = data.state === LoadingState.Loading;
    const errors = data.errors?.map((e) => e.message).filter(Boolean) ?? [];
    return (
      <div className={styles.empty} style={{ width, height }} data-testid="qr-replay-empty">
        <strong>{loading ? 'Running the trace…' : errors.length ? 'The query failed' : 'Nothing to replay'}</strong>
        <span>
          {errors.length
            ? errors.join('; ')
            : loading
              ? 'The events appear here when the trace has been read back.'
              : `${result.error} Run a trace with the QueryReplay SQL Server data source.`}
        </span>
      </div>
    );
  }
  return <Replay key={result.trace.traceId} {...props} trace={result.trace} />;
}

interface ReplayProps extends Props {
  trace: ReplayTrace;
}

function Replay({ trace, width, height, options: rawOptions, data }: ReplayProps) {
  const styles = useStyles2(getStyles);
  const theme = useTheme2();
  const palette = useMemo(() => paletteFromTheme(theme), [theme]);
  const options = useMemo(() => withDefaults(rawOptions), [rawOptions]);
  const bounds = useMemo<WindowUs>(
    () => ({ fromUs: trace.startUs, toUs: Math.max(trace.endUs, trace.startUs + 1) }),
    [trace.startUs, trace.endUs]
  );
  const initial = useMemo(() => activityWindow(trace, bounds), [trace, bounds]);
  const store = useMemo(
    () =>
      new ReplayStore({
        playheadUs: initial.fromUs,
        playing: false,
        speed: 1,
        window: initial,
        filterNode: null,
        selectedNode: null,
        selected: null,
        stepLane: null,
      }),
    [initial]
  );
  const stats = useMemo(() => {
    const s = newStats();
    return s;
  }, []);
  const rootRef = useRef<HTMLDivElement>(null);

  // the linked view: beside the timeline when there is room, else one view at a time
  const split = width >= 900 && height >= 260;
  const stacked = !split && width >= 480 && height >= 520;
  const single = !split && !stacked;
  const [view, setView] = useState<ViewChoice>('timeline');
  const [side, setSide] = useState<LinkedView>(options.linkedView);
  useEffect(() => setSide(options.linkedView), [options.linkedView]);

  const sideW = split ? Math.round(Math.min(560, Math.max(320, width * 0.36))) : 0;
  const mainW = width - sideW - (split ? 8 : 0);
  const bodyH = height - TOOLBAR_H;
  const stackedLinkedH = stacked ? Math.round(bodyH * 0.42) : 0;
  const timelineH = Math.max(40, bodyH - SCRUBBER_H - 2 - stackedLinkedH);
  const plotW = Math.max(10, mainW - labelWidth(mainW) - 4);

  const shown = options.lanes;
  const eventLanes = useMemo(() => shown.filter(isEventLane), [shown]);

  // level of detail: a pyramid per large lane, built on first use
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

  // zoomed-in detail through `view` queries
  const [detailVersion, setDetailVersion] = useState(0);
  const [detailStatus, setDetailStatus] = useState<{ loading: boolean; error: string | null }>({
    loading: false,
    error: null,
  });
  const ds = useMemo(() => datasourceOf(data.request, grafanaDatasources()), [data.request]);
  const detail = useMemo(() => {
    const fetcher = options.fetchDetail && ds && trace.traceId ? viewFetcher(ds, trace.traceId) : null;
    const cache: DetailCache = new DetailCache(fetcher, (d: Detail | null) => {
      if (d) {
        stats.detailFetches++;
        stats.detailWindows.push({
          ...d.window,
          binned: Object.values(d.lanes)
            .filter((l) => l?.binned)
            .map((l) => l!.name),
        });
        setDetailVersion((v) => v + 1);
      }
      setDetailStatus({ loading: cache.loading, error: cache.error });
    });
    return cache;
    // ds is compared by uid: a new object each render must not drop the cache
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [trace, options.fetchDetail, ds?.uid, stats]);
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
      if (needsDetail(trace, eventLanes, w, plotW)) {
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
  }, [store, detail, trace, eventLanes, plotW, bounds]);

  // playback
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

  const playPause = useCallback(() => {
    const s = store.get();
    store.set(s.playing ? { playing: false } : { playing: true, playheadUs: playFrom(s.playheadUs, s.window) });
  }, [store]);

  const step = useCallback(
    (dir: 1 | -1) => {
      const s = store.get();
      const lanesNow = lanesFor(s.window);
      const names = s.stepLane ? [s.stepLane] : eventLanes;
      const lanes = names.map((n) => lanesNow[n]).filter((l): l is LaneData => !!l && l.traced);
      const t = stepTime(lanes, s.playheadUs, dir, s.filterNode);
      if (t === null) {
        return;
      }
      // select what the step landed on, so its fields and operator show
      let selected = s.selected;
      for (const lane of lanes) {
        const i = entryAt(lane, t, s.filterNode);
        if (i >= 0) {
          const node = lane.node[i];
          selected = {
            lane: lane.name,
            index: i,
            detail: lane !== trace.lanes[lane.name],
            row: lane.row[i],
            nodeId: node < 0 ? null : node,
            startUs: lane.start[i],
            endUs: lane.end[i],
          };
          break;
        }
      }
      store.set({
        playing: false,
        playheadUs: t,
        window: reveal(s.window, t, bounds),
        selected,
        selectedNode: s.filterNode ?? selected?.nodeId ?? s.selectedNode,
      });
    },
    [store, lanesFor, eventLanes, bounds, trace]
  );

  const zoom = useCallback(
    (factor: number) => {
      const s = store.get();
      const center =
        s.playheadUs >= s.window.fromUs && s.playheadUs <= s.window.toUs
          ? s.playheadUs
          : (s.window.fromUs + s.window.toUs) / 2;
      store.set({ window: zoomAt(s.window, factor, center, bounds) });
    },
    [store, bounds]
  );
  const reset = useCallback(() => store.set({ window: { ...bounds } }), [store, bounds]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if ((e.target as HTMLElement).closest('input, textarea, [role="combobox"]')) {
      return;
    }
    const handled = ((): boolean => {
      switch (e.key) {
        case ' ':
          playPause();
          return true;
        case 'ArrowRight':
          step(1);
          return true;
        case 'ArrowLeft':
          step(-1);
          return true;
        case '+':
        case '=':
          zoom(1 / 1.5);
          return true;
        case '-':
        case '_':
          zoom(1.5);
          return true;
        case 'Escape':
          store.set({ filterNode: null, selectedNode: null, selected: null });
          return true;
        case 'Home':
          store.set({ playheadUs: store.get().window.fromUs });
          return true;
        case 'End':
          store.set({ playheadUs: store.get().window.toUs });
          return true;
        default:
          return false;
      }
    })();
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  };

  // the debug handle for the browser tests
  useEffect(() => {
    const root = debugRoot();
    const handle: DebugPanel = { store, stats, trace };
    root?.panels.push(handle);
    return () => {
      if (root) {
        root.panels = root.panels.filter((p) => p !== handle);
      }
    };
  }, [store, stats, trace]);

  const effective = lanesFor(store.get().window);
  const laneOf = useCallback(
    (name: EventLaneName, isDetail: boolean) => (isDetail ? lanesFor(store.get().window)[name] : trace.lanes[name]),
    [lanesFor, store, trace]
  );

  const timeline = (
    <div className={styles.column} style={{ width: mainW }}>
      <TimelineView
        trace={trace}
        store={store}
        width={mainW}
        height={timelineH}
        shown={shown as LaneName[]}
        colorBy={options.colorBy}
        unit={options.timeUnit}
        palette={palette}
        lanesFor={lanesFor}
        pyramid={pyramid}
        detailVersion={detailVersion}
        stats={stats}
        bounds={bounds}
      />
      <div style={{ marginLeft: labelWidth(mainW), marginTop: 2 }}>
        <Scrubber
          trace={trace}
          store={store}
          width={plotW}
          height={SCRUBBER_H}
          lanes={eventLanes}
          pyramid={pyramid}
          palette={palette}
          unit={options.timeUnit}
          bounds={bounds}
        />
      </div>
    </div>
  );

  const linked = (which: LinkedView, w: number, h: number) => {
    switch (which) {
      case 'plan':
        return (
          <PlanTree trace={trace} store={store} palette={palette} reads={effective.read} unit={options.timeUnit} />
        );
      case 'pages':
        return (
          <PageMap
            pages={trace.pages}
            reads={trace.lanes.read}
            writes={trace.lanes.write}
            store={store}
            palette={palette}
            colorBy={options.colorBy}
            width={w}
            height={h}
          />
        );
      case 'locks':
        return <LockList trace={trace} lane={effective.lock} store={store} unit={options.timeUnit} />;
      case 'stack':
        return <CallStackView trace={trace} store={store} unit={options.timeUnit} laneOf={laneOf} />;
    }
  };

  const tabs = (w: number, h: number) => (
    <div className={styles.side} style={{ width: w, height: h }} data-testid="qr-linked">
      <TabsBar className={styles.tabs}>
        {(['plan', 'pages', 'locks', 'stack'] as LinkedView[]).map((v) => (
          <Tab
            key={v}
            label={TAB_LABEL[v]}
            active={side === v}
            onChangeTab={() => setSide(v)}
            data-testid={`qr-tab-${v}`}
          />
        ))}
      </TabsBar>
      <div className={styles.sideBody} style={{ height: h - 34 }}>
        {linked(side, w - 8, h - 40)}
      </div>
    </div>
  );

  return (
    <div
      ref={rootRef}
      className={styles.root}
      style={{ width, height }}
      tabIndex={0}
      onKeyDown={onKeyDown}
      onPointerDown={() => rootRef.current?.focus({ preventScroll: true })}
      data-testid="qr-replay"
      data-trace-id={trace.traceId}
      aria-label="Query replay. Space plays or pauses, arrows step between events, plus and minus zoom, Escape clears the filter."
    >
      <Toolbar
        trace={trace}
        store={store}
        unit={options.timeUnit}
        width={width}
        stepLanes={eventLanes}
        onPlayPause={playPause}
        onStep={step}
        onZoom={zoom}
        onReset={reset}
        view={single ? view : null}
        onView={setView}
        detailStatus={detailStatus}
      />
      {split && (
        <div className={styles.row}>
          {timeline}
          {tabs(sideW, bodyH)}
        </div>
      )}
      {stacked && (
        <>
          {timeline}
          {tabs(width, stackedLinkedH)}
        </>
      )}
      {single &&
        (view === 'timeline' ? (
          timeline
        ) : (
          <div className={styles.sideBody} style={{ height: bodyH }} data-testid="qr-linked">
            {linked(view, width - 8, bodyH - 4)}
          </div>
        ))}
    </div>
  );
}

/**
 * The window a replay opens on: from a little before the first operator
 * starts or first event happens to the end, so time spent compiling before
 * the plan runs does not take most of the screen (the scrubber still shows
 * the whole trace, and double-click or the ⟷ button shows all of it).
 */
export function activityWindow(trace: ReplayTrace, bounds: WindowUs): WindowUs {
  let first = Infinity;
  for (const op of trace.operators) {
    if (op.executed) {
      first = Math.min(first, op.startUs);
    }
  }
  for (const lane of Object.values(trace.lanes)) {
    if (lane && lane.n > 0) {
      first = Math.min(first, lane.start[0]);
    }
  }
  if (!Number.isFinite(first) || first <= bounds.fromUs) {
    return { ...bounds };
  }
  const pad = (bounds.toUs - first) * 0.02;
  return { fromUs: Math.max(bounds.fromUs, first - pad), toUs: bounds.toUs };
}

const TAB_LABEL: Record<LinkedView, string> = { plan: 'Plan', pages: 'Pages', locks: 'Locks', stack: 'Event & stack' };

function useSyncPlaying(store: ReplayStore): boolean {
  const [playing, setPlaying] = useState(store.get().playing);
  useEffect(() => store.subscribe(() => setPlaying(store.get().playing)), [store]);
  return playing;
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({
    display: 'flex',
    flexDirection: 'column',
    overflow: 'hidden',
    outline: 'none',
    '&:focus-visible': { boxShadow: `inset 0 0 0 1px ${theme.colors.primary.border}` },
  }),
  row: css({ display: 'flex', gap: 8, flex: 1, minHeight: 0 }),
  column: css({ display: 'flex', flexDirection: 'column', flex: 'none' }),
  side: css({ display: 'flex', flexDirection: 'column', flex: 'none', minHeight: 0 }),
  tabs: css({ flex: 'none' }),
  sideBody: css({ overflow: 'hidden', padding: theme.spacing(0.5, 0.5, 0, 0.5) }),
  empty: css({
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(0.5),
    padding: theme.spacing(1),
    color: theme.colors.text.secondary,
    overflow: 'auto',
  }),
});

/** Grafana's DataSourceSrv, or null where there is none (tests, the browser harness). */
function grafanaDatasources(): DatasourceLookup | null {
  try {
    return getDataSourceSrv();
  } catch {
    return null;
  }
}
