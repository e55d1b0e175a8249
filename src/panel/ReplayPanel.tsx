import React, { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { TAB_LABEL, tabLabel } from './tabs';
import { css } from '@emotion/css';
import { GrafanaTheme2, LoadingState, PanelProps } from '@grafana/data';
import { Tab, TabsBar, useStyles2, useTheme2 } from '@grafana/ui';
import { LaneName, isEventLane } from './model/lanes';
import { LaneData, ReplayTrace, WindowUs, traceFromFrames } from './model/trace';
import { DebugPanel, debugRoot, newStats } from './replay/debug';
import { reveal } from './replay/scale';
import { stepTime, entryAt } from './replay/step';
import { ReplayStore } from './replay/store';
import { labelWidth } from './render/layout';
import { paletteFromTheme } from './render/palette';
import { fetchStatement, queryTypeOf } from './detailSource';
import { LaneSource, useLanes, usePlayback, useViewDatasource } from './components/useLanes';
import { useReplay } from './components/useStore';
import { handleKey, transportKeys, useTransport } from './components/useTransport';
import { activityWindow } from './replay/window';
import { LinkedView, ReplayOptions, withDefaults } from './types';
import { TimelineView } from './components/TimelineView';
import { Scrubber } from './components/Scrubber';
import { Toolbar, ViewChoice } from './components/Toolbar';
import { PlanTree } from './components/PlanTree';
import { PlanDiagram } from './components/PlanDiagram';
import { PageMap } from './components/PageMap';
import { LockList } from './components/LockList';
import { CallStackView } from './components/CallStackView';
import { FindingsList } from './components/FindingsList';
import { FindingsStrip } from './components/FindingsStrip';
import { useFindings } from './components/useFindings';
import { selectionOf } from './findings/focus';
import { ComparePanel } from './components/ComparePanel';
import { isCompareResponse } from './compare/model';
import { summariesFromFrames } from './model/summary';
import { QueryHeader, headerHeight } from './components/QueryHeader';
import { Summaries } from './components/Summaries';
import { PhaseLegend, legendHeight } from './components/PhaseLegend';
import { StatementPick, useStatements } from './components/useStatements';
import { StatementTree } from './components/StatementTree';
import { BANDS_H, StatementBands } from './components/StatementBands';
import { LiveView } from './live/LiveView';
import { useLive } from './live/useLive';

const TOOLBAR_H = 32;
const SCRUBBER_H = 16;

type Props = PanelProps<ReplayOptions>;

/**
 * The replay panel: a live trace while it runs (live/), then — or for a
 * stored trace — the replay.
 */
export function ReplayPanel(props: Props) {
  const live = useLive(props.data);
  if (live.series) {
    return <StoredReplay {...props} data={{ ...props.data, series: live.series, state: LoadingState.Done }} />;
  }
  if (live.snap) {
    return (
      <LiveView
        snap={live.snap}
        width={props.width}
        height={props.height}
        onCancel={live.cancel}
        finishing={live.finishing}
      />
    );
  }
  return <StoredReplay {...props} />;
}

/** Reads the frames, then hands a trace to the replay (or says why there is none). */
function StoredReplay(props: Props) {
  const { data, width, height } = props;
  const styles = useStyles2(getStyles);
  const compare = isCompareResponse(data.series) || queryTypeOf(data.request) === 'compare';
  const base = useMemo(() => traceFromFrames(compare ? [] : data.series), [data.series, compare]);
  // a picked statement replays its own frames (a `bundle` query with `statement`)
  const statements = useStatements(
    data.series,
    useViewDatasource(data.request),
    base.trace?.traceId ?? '',
    fetchStatement
  );
  const result = useMemo(
    () => (statements.series === data.series ? base : traceFromFrames(statements.series)),
    [statements.series, data.series, base]
  );
  if (compare) {
    return <ComparePanel {...props} />;
  }
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
  const shown = statements.series === data.series ? data : { ...data, series: statements.series };
  return (
    <Replay
      key={`${result.trace.traceId}/${statements.tree?.current ?? ''}`}
      {...props}
      data={shown}
      trace={result.trace}
      statements={statements}
    />
  );
}

interface ReplayProps extends Props {
  trace: ReplayTrace;
  statements: StatementPick;
}

function Replay({ trace, width, height, options: rawOptions, data, statements }: ReplayProps) {
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
  const findings = useFindings(data.series, store, trace, bounds);
  // the query in view and Plan Explorer's summaries (whole trace; a zoom's view query does not change them)
  const summaries = useMemo(() => summariesFromFrames(data.series), [data.series]);
  const headerH = summaries.facts ? headerHeight(width) : 0;

  // the linked view: beside the timeline when there is room, else one view at a time
  const split = width >= 900 && height >= 260;
  const stacked = !split && width >= 480 && height >= 520;
  const single = !split && !stacked;
  const [view, setView] = useState<ViewChoice>('timeline');
  const [side, setSide] = useState<LinkedView>(options.linkedView);
  // a new option value opens its view (state adjusted while rendering, not in an effect)
  const [optionView, setOptionView] = useState(options.linkedView);
  if (optionView !== options.linkedView) {
    setOptionView(options.linkedView);
    setSide(options.linkedView);
  }

  // the plan diagram is a picture of the whole plan: it gets half the width, the lists a third
  const sideShare = side === 'diagram' ? 0.5 : 0.36;
  const sideW = split ? Math.round(Math.min(side === 'diagram' ? 1200 : 560, Math.max(320, width * sideShare))) : 0;
  const mainW = width - sideW - (split ? 8 : 0);
  const bodyH = height - TOOLBAR_H - findings.stripH - headerH;
  const stackedLinkedH = stacked ? Math.round(bodyH * 0.42) : 0;
  const bandsH = statements.bands.length ? BANDS_H : 0;
  const plotW = Math.max(10, mainW - labelWidth(mainW) - 4);
  const legendH = trace ? legendHeight(plotW, trace.escalations.length) : 0;
  const timelineH = Math.max(40, bodyH - SCRUBBER_H - 2 - legendH - bandsH - stackedLinkedH);

  const shown = options.lanes;
  const eventLanes = useMemo(() => shown.filter(isEventLane), [shown]);

  // level of detail, zoomed-in detail through `view` queries, playback
  const ds = useViewDatasource(data.request);
  const { lanesFor, pyramid, detailVersion, detailStatus } = useLanes({
    trace,
    bounds,
    store,
    lanes: eventLanes,
    plotW,
    ds,
    fetchDetail: options.fetchDetail,
    stats,
    statement: statements.picked,
  });
  usePlayback(store);
  findings.setLanes(lanesFor);

  const transport = useTransport(store, bounds);

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
          selected = selectionOf(lane, i, trace);
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

  const onKeyDown = (e: React.KeyboardEvent) =>
    handleKey(e, {
      ...transportKeys(store, transport, step),
      Escape: () => store.set({ filterNode: null, selectedNode: null, selected: null, highlight: null }),
      ']': () => findings.step(1),
      '[': () => findings.step(-1),
    });

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
      {bandsH > 0 && (
        <div style={{ marginLeft: labelWidth(mainW) }}>
          <StatementBands bands={statements.bands} store={store} width={plotW} onPick={statements.pick} />
        </div>
      )}
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
      <div style={{ marginLeft: labelWidth(mainW) }}>
        <PhaseLegend palette={palette} width={plotW} escalations={trace.escalations.length} />
      </div>
    </div>
  );

  const linked = (which: LinkedView, w: number, h: number) => {
    switch (which) {
      case 'plan':
        return (
          <WindowLanes store={store} lanesFor={lanesFor}>
            {(lanes) => (
              <PlanTree trace={trace} store={store} palette={palette} reads={lanes.read} unit={options.timeUnit} />
            )}
          </WindowLanes>
        );
      case 'diagram':
        return (
          <WindowLanes store={store} lanesFor={lanesFor}>
            {(lanes) => (
              <PlanDiagram
                trace={trace}
                store={store}
                palette={palette}
                reads={lanes.read}
                waits={lanes.wait}
                width={w}
                height={h}
              />
            )}
          </WindowLanes>
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
            operators={trace.byNode}
          />
        );
      case 'locks':
        return (
          <WindowLanes store={store} lanesFor={lanesFor}>
            {(lanes) => <LockList trace={trace} lane={lanes.lock} store={store} unit={options.timeUnit} />}
          </WindowLanes>
        );
      case 'stack':
        return <CallStackView trace={trace} store={store} unit={options.timeUnit} lanesFor={lanesFor} />;
      case 'summary':
        return (
          <Summaries
            tableIO={summaries.tableIO}
            waits={summaries.waits}
            store={store}
            waitLane={trace.lanes.wait}
            bounds={bounds}
          />
        );
      case 'statements':
        return statements.tree ? (
          <StatementTree
            tree={statements.tree}
            onPick={statements.pick}
            pending={statements.pending}
            error={statements.error}
          />
        ) : null;
      case 'findings':
        return <FindingsList report={findings.report} store={store} onFocus={findings.focus} onStep={findings.step} />;
    }
  };

  const tabs = (w: number, h: number) => (
    <div className={styles.side} style={{ width: w, height: h }} data-testid="qr-linked">
      <TabsBar className={styles.tabs}>
        {(
          (statements.tree ? ['statements'] : [])
            .concat(findings.report ? ['findings'] : [])
            .concat(['plan', 'diagram', 'summary', 'pages', 'locks', 'stack']) as LinkedView[]
        ).map((v, _, all) => (
          <Tab
            key={v}
            label={v === 'findings' ? `Findings ${findings.report?.findings.length ?? ''}` : tabLabel(v, w, all)}
            title={TAB_LABEL[v]}
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
      {summaries.facts && <QueryHeader facts={summaries.facts} waits={summaries.waits} width={width} />}
      <Toolbar
        trace={trace}
        store={store}
        unit={options.timeUnit}
        width={width}
        stepLanes={eventLanes}
        onPlayPause={transport.playPause}
        onStep={step}
        onZoom={transport.zoom}
        onReset={transport.reset}
        view={single ? view : null}
        onView={setView}
        detailStatus={detailStatus}
      />
      {findings.report && findings.stripH > 0 && (
        <FindingsStrip
          report={findings.report}
          store={store}
          width={width}
          onFocus={findings.focus}
          onStep={findings.step}
          onOpenList={() => (single ? setView('findings') : setSide('findings'))}
        />
      )}
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
 * The lanes of the store's current window (zoomed-in detail where it has
 * arrived) for the views beside the timeline: subscribed, so they follow a
 * zoom or a pan, and only this subtree re-renders when the window moves.
 */
function WindowLanes({
  store,
  lanesFor,
  children,
}: {
  store: ReplayStore;
  lanesFor: LaneSource['lanesFor'];
  children: (lanes: ReturnType<LaneSource['lanesFor']>) => React.ReactNode;
}) {
  const window = useReplay(store, (s) => s.window);
  return <>{children(lanesFor(window))}</>;
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
