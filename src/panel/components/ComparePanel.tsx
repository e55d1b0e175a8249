import React, { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, LoadingState, PanelProps } from '@grafana/data';
import { Icon, useStyles2, useTheme2 } from '@grafana/ui';
import { naturalHeight, sideHeights } from '../compare/layout';
import { CompareLink } from '../compare/link';
import { Comparison, Side, colourIdsOfB, compareFromFrames, sideFacts } from '../compare/model';
import { EventLaneName, LaneName, isEventLane } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { DebugPanel, debugRoot, newStats } from '../replay/debug';
import { stepTime } from '../replay/step';
import { ReplayStore } from '../replay/store';
import { useLanes, usePlayback, useViewDatasource } from './useLanes';
import { handleKey, transportKeys, useTransport } from './useTransport';
import { activityWindow } from '../replay/window';
import { labelWidth } from '../render/layout';
import { Palette, paletteFromTheme } from '../render/palette';
import { ReplayOptions, withDefaults } from '../types';
import { CompareTable, statementLabel } from './CompareTable';
import { TimelineView } from './TimelineView';
import { TransportBar, TransportTips } from './Toolbar';

/**
 * The replay panel's compare mode (a `compare` query, docs/frames.md §3.11):
 * the statement's verdict, two timelines on one time axis aligned at their
 * starts — A above B, each with its own plan rows and lanes in the same
 * order, so the eye compares a lane with the same lane straight below it —
 * and the per-operator comparison table. Both timelines zoom, pan and play
 * together; selecting an operator (in the table or in either timeline)
 * selects its partner on the other side.
 */

type Props = PanelProps<ReplayOptions>;

const TOOLBAR_H = 32;
const VERDICT_H = 24;
const SIDE_H = 20;

export function ComparePanel(props: Props) {
  const { data, width, height } = props;
  const styles = useStyles2(getStyles);
  const read = useMemo(() => compareFromFrames(data.series), [data.series]);
  if (!read.comparison) {
    const loading = data.state === LoadingState.Loading;
    const errors = data.errors?.map((e) => e.message).filter(Boolean) ?? [];
    return (
      <div className={styles.empty} style={{ width, height }} data-testid="qr-replay-empty">
        <strong>
          {loading ? 'Comparing the two traces…' : errors.length ? 'The comparison failed' : 'Nothing to compare'}
        </strong>
        <span>{errors.length ? errors.join('; ') : loading ? '' : read.error}</span>
      </div>
    );
  }
  const c = read.comparison;
  return <CompareView key={`${c.a.traceId}:${c.b.traceId}`} {...props} comparison={c} />;
}

type ViewChoice = 'timelines' | 'operators';

interface ViewProps extends Props {
  comparison: Comparison;
}

function newStore(window: WindowUs): ReplayStore {
  return new ReplayStore({
    playheadUs: window.fromUs,
    playing: false,
    speed: 1,
    window,
    filterNode: null,
    selectedNode: null,
    selected: null,
    stepLane: null,
    highlight: null,
  });
}

function CompareView({ comparison: c, width, height, options: rawOptions, data }: ViewProps) {
  const styles = useStyles2(getStyles);
  const theme = useTheme2();
  const options = useMemo(() => withDefaults(rawOptions), [rawOptions]);
  const palette = useMemo(() => paletteFromTheme(theme), [theme]);
  // B's operators take their A partner's colour
  const paletteB = useMemo<Palette>(() => {
    const ids = colourIdsOfB(c.rows, c.a);
    return { ...palette, operator: (id: number) => palette.operator(ids(id)) };
  }, [palette, c]);
  const bounds = useMemo<WindowUs>(() => {
    const from = Math.min(c.a.startUs, c.b.startUs);
    return { fromUs: from, toUs: Math.max(c.a.endUs, c.b.endUs, from + 1) };
  }, [c]);
  const [storeA, storeB] = useMemo(() => {
    const w = {
      fromUs: Math.min(activityWindow(c.a, bounds).fromUs, activityWindow(c.b, bounds).fromUs),
      toUs: bounds.toUs,
    };
    return [newStore(w), newStore(w)];
  }, [c, bounds]);
  const link = useMemo(() => new CompareLink(storeA, storeB, c.rows), [storeA, storeB, c]);
  useEffect(() => () => link.dispose(), [link]);
  const statsA = useMemo(() => newStats(), []);
  const statsB = useMemo(() => newStats(), []);
  const rootRef = useRef<HTMLDivElement>(null);

  const split = width >= 900 && height >= 300;
  const stacked = !split && width >= 480 && height >= 520;
  const single = !split && !stacked;
  const [view, setView] = useState<ViewChoice>('timelines');
  const tableW = split ? Math.round(Math.min(640, Math.max(360, width * 0.42))) : width;
  const mainW = split ? width - tableW - 8 : width;
  const bodyH = height - TOOLBAR_H - VERDICT_H;
  const tableH = split ? bodyH : stacked ? Math.round(bodyH * 0.4) : bodyH;
  const timelinesH = split || single ? bodyH : bodyH - tableH - 4;
  const plotW = Math.max(10, mainW - labelWidth(mainW) - 4);

  // lanes that have something on either side (a lane empty in both says nothing about the change);
  // a panel too low for them all keeps the plan and the reads
  const roomy = timelinesH >= 260;
  const shown = useMemo<LaneName[]>(
    () =>
      options.lanes.filter(
        (l) =>
          !isEventLane(l) ||
          (((c.a.lanes[l]?.total ?? 0) > 0 || (c.b.lanes[l]?.total ?? 0) > 0) && (roomy || l === 'read'))
      ),
    [options.lanes, c, roomy]
  );
  const [heightA, heightB] = sideHeights(timelinesH - 2 * SIDE_H, naturalHeight(shown, c.a), naturalHeight(shown, c.b));
  const eventLanes = useMemo(() => shown.filter(isEventLane), [shown]);
  const ds = useViewDatasource(data.request);
  const lanesA = useLanes({
    trace: c.a,
    bounds,
    store: storeA,
    lanes: eventLanes,
    plotW,
    ds,
    fetchDetail: options.fetchDetail,
    stats: statsA,
  });
  const lanesB = useLanes({
    trace: c.b,
    bounds,
    store: storeB,
    lanes: eventLanes,
    plotW,
    ds,
    fetchDetail: options.fetchDetail,
    stats: statsB,
  });
  // the link mirrors A's playhead to B
  usePlayback(storeA);

  const transport = useTransport(storeA, bounds);
  const step = useCallback(
    (dir: 1 | -1) => {
      const s = storeA.get();
      const pick = (lanes: Partial<Record<EventLaneName, LaneData>>) =>
        eventLanes.map((l) => lanes[l]).filter((l): l is LaneData => !!l && l.traced);
      const t = stepTime(
        [...pick(lanesA.lanesFor(s.window)), ...pick(lanesB.lanesFor(s.window))],
        s.playheadUs,
        dir,
        null
      );
      if (t !== null) {
        storeA.set({ playing: false, playheadUs: t });
      }
    },
    [storeA, eventLanes, lanesA, lanesB]
  );

  const onKeyDown = (e: React.KeyboardEvent) =>
    handleKey(e, { ...transportKeys(storeA, transport, step), Escape: () => link.clear() });

  // the debug handles for the browser tests: one per side
  useEffect(() => {
    const root = debugRoot();
    const handles: DebugPanel[] = [
      { store: storeA, stats: statsA, trace: c.a, side: 'a' },
      { store: storeB, stats: statsB, trace: c.b, side: 'b' },
    ];
    root?.panels.push(...handles);
    return () => {
      if (root) {
        root.panels = root.panels.filter((p) => !handles.includes(p));
      }
    };
  }, [storeA, storeB, statsA, statsB, c]);

  const side = (s: Side) => {
    const trace = s === 'a' ? c.a : c.b;
    const lanes = s === 'a' ? lanesA : lanesB;
    return (
      <div data-testid={`qr-compare-side-${s}`}>
        <SideHeader side={s} trace={trace} facts={sideFacts(c, s)} width={mainW} />
        <TimelineView
          trace={trace}
          store={s === 'a' ? storeA : storeB}
          width={mainW}
          height={s === 'a' ? heightA : heightB}
          shown={shown}
          colorBy={options.colorBy}
          unit={options.timeUnit}
          palette={s === 'a' ? palette : paletteB}
          lanesFor={lanes.lanesFor}
          pyramid={lanes.pyramid}
          detailVersion={lanes.detailVersion}
          stats={s === 'a' ? statsA : statsB}
          bounds={bounds}
        />
      </div>
    );
  };
  const timelines = (
    <div className={styles.column} style={{ width: mainW }}>
      {side('a')}
      {side('b')}
    </div>
  );
  const table = (w: number, h: number) => (
    <div style={{ width: w, height: h }} className={styles.tableBox}>
      <CompareTable comparison={c} link={link} width={w} />
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
      data-testid="qr-compare"
      data-trace-ids={`${c.a.traceId} ${c.b.traceId}`}
      aria-label="Comparison of two traces. Space plays or pauses, arrows step between events, plus and minus zoom, Escape clears the selection."
    >
      <TransportBar
        store={storeA}
        unit={options.timeUnit}
        width={width}
        wholeUs={bounds.toUs}
        endUs={bounds.toUs}
        tips={COMPARE_TIPS}
        viewOptions={VIEW_OPTIONS}
        onPlayPause={transport.playPause}
        onStep={step}
        onZoom={transport.zoom}
        onReset={transport.reset}
        view={single ? view : null}
        onView={setView}
      />
      <div
        className={styles.verdict}
        style={{ height: VERDICT_H }}
        title={verdictTitle(c)}
        data-testid="qr-compare-verdict"
      >
        <Icon name="exchange-alt" size="sm" />
        {c.statements.length > 0 && <span className={styles.sideFacts}>whole batch:</span>}
        <span className={styles.verdictText}>{c.verdict}</span>
      </div>
      {split && (
        <div className={styles.row}>
          {timelines}
          {table(tableW, bodyH)}
        </div>
      )}
      {stacked && (
        <>
          {timelines}
          {table(width, tableH)}
        </>
      )}
      {single && (view === 'timelines' ? timelines : table(width, bodyH))}
    </div>
  );
}

/** "A  SELECT … · 7.7 ms · 61 reads" above a side's timeline. */
function SideHeader({ side, trace, facts, width }: { side: Side; trace: ReplayTrace; facts: string; width: number }) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.side} style={{ height: SIDE_H, width }} title={trace.statement}>
      <span className={side === 'a' ? styles.tagA : styles.tagB}>{side.toUpperCase()}</span>
      <span className={styles.statement}>{trace.statement || trace.traceId}</span>
      <span className={styles.sideFacts}>{facts}</span>
    </div>
  );
}

const VIEW_OPTIONS: Array<{ label: string; value: ViewChoice }> = [
  { label: 'Timelines', value: 'timelines' },
  { label: 'Operators', value: 'operators' },
];
const COMPARE_TIPS: TransportTips = {
  play: 'Play both (space)',
  pause: 'Pause both (space)',
  back: 'Previous event of either trace (←)',
  next: 'Next event of either trace (→)',
  reset: 'Both traces whole',
};

/** The verdict's tooltip: the batch's line, then each statement pair's own. */
function verdictTitle(c: Comparison): string {
  return [c.verdict, ...c.statements.map((st) => `${statementLabel(st)} ${st.status}: ${st.verdict}`)].join('\n');
}

const getStyles = (theme: GrafanaTheme2) => {
  const tag = (color: string) =>
    css({
      flex: 'none',
      width: 16,
      height: 16,
      lineHeight: '16px',
      textAlign: 'center',
      borderRadius: theme.shape.radius.default,
      fontWeight: theme.typography.fontWeightBold,
      fontSize: 11,
      color: theme.colors.getContrastText(theme.visualization.getColorByName(color)),
      background: theme.visualization.getColorByName(color),
    });
  return {
    root: css({
      display: 'flex',
      flexDirection: 'column',
      overflow: 'hidden',
      outline: 'none',
      '&:focus-visible': { boxShadow: `inset 0 0 0 1px ${theme.colors.primary.border}` },
    }),
    verdict: css({
      display: 'flex',
      alignItems: 'center',
      gap: theme.spacing(0.75),
      flex: 'none',
      padding: theme.spacing(0, 0.75),
      background: theme.colors.background.secondary,
      borderTop: `1px solid ${theme.colors.border.weak}`,
      borderBottom: `1px solid ${theme.colors.border.weak}`,
      fontWeight: theme.typography.fontWeightMedium,
      fontSize: theme.typography.bodySmall.fontSize,
      overflow: 'hidden',
    }),
    verdictText: css({ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }),
    row: css({ display: 'flex', gap: 8, flex: 1, minHeight: 0 }),
    column: css({ display: 'flex', flexDirection: 'column', flex: 'none' }),
    tableBox: css({ flex: 'none', overflow: 'hidden', paddingTop: theme.spacing(0.5) }),
    side: css({
      display: 'flex',
      alignItems: 'center',
      gap: theme.spacing(0.75),
      fontSize: theme.typography.bodySmall.fontSize,
      overflow: 'hidden',
      paddingLeft: 2,
    }),
    tagA: tag('blue'),
    tagB: tag('orange'),
    statement: css({
      fontFamily: theme.typography.fontFamilyMonospace,
      overflow: 'hidden',
      textOverflow: 'ellipsis',
      whiteSpace: 'nowrap',
      minWidth: 0,
      flex: 1,
    }),
    sideFacts: css({ color: theme.colors.text.secondary, whiteSpace: 'nowrap', flex: 'none', paddingRight: 4 }),
    empty: css({
      display: 'flex',
      flexDirection: 'column',
      gap: theme.spacing(0.5),
      padding: theme.spacing(1),
      color: theme.colors.text.secondary,
      overflow: 'auto',
    }),
  };
};
