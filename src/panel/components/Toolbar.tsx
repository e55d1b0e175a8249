import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Icon, IconButton, Tooltip, useStyles2 } from '@grafana/ui';
import { CompactSelect } from './CompactSelect';
import { EventLaneName, LANE_DEFS } from '../model/lanes';
import { ReplayTrace } from '../model/trace';
import { SPEEDS } from '../replay/clock';
import { TimeUnit, formatUs, span } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { LinkedView } from '../types';
import { operatorName } from '../replay/describe';
import { useReplay } from './useStore';

export type ViewChoice = 'timeline' | LinkedView;

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  unit: TimeUnit;
  width: number;
  stepLanes: EventLaneName[];
  onPlayPause: () => void;
  onStep: (dir: 1 | -1) => void;
  onZoom: (factor: number) => void;
  onReset: () => void;
  /** In a small panel one view is shown at a time; this chooses it. */
  view: ViewChoice | null;
  onView: (v: ViewChoice) => void;
  detailStatus: { loading: boolean; error: string | null };
}

const SPEED_OPTIONS: Array<{ label: string; value: number }> = SPEEDS.map((s) => ({ label: `${s}×`, value: s }));
const VIEW_OPTIONS: Array<{ label: string; value: ViewChoice }> = [
  { label: 'Timeline', value: 'timeline' },
  { label: 'Findings', value: 'findings' },
  { label: 'Plan', value: 'plan' },
  { label: 'Diagram', value: 'diagram' },
  { label: 'Pages', value: 'pages' },
  { label: 'Locks', value: 'locks' },
  { label: 'Stack', value: 'stack' },
  { label: 'I/O & waits', value: 'summary' },
];

/** A toolbar narrower than this leaves out the zoom buttons, the step-lane choice and the trace's end. */
const COMPACT_W = 640;

/**
 * The replay panel's toolbar: the transport (TransportBar) with what one
 * trace adds: the lane to step through, the operator filter, detail and
 * trace warnings.
 */
export function Toolbar(props: Props) {
  const { trace, store, width, stepLanes } = props;
  const styles = useStyles2(getStyles);
  const filter = useReplay(store, (s) => s.filterNode);
  const stepLane = useReplay(store, (s) => s.stepLane);
  const laneOptions: Array<{ label: string; value: EventLaneName | 'all' }> = [
    { label: 'all lanes', value: 'all' },
    ...stepLanes.map((l) => ({ label: LANE_DEFS[l].label, value: l })),
  ];
  const problems = traceProblems(trace);
  return (
    <TransportBar
      store={store}
      unit={props.unit}
      width={width}
      wholeUs={span({ fromUs: trace.startUs, toUs: trace.endUs })}
      endUs={trace.endUs}
      tips={SINGLE_TIPS}
      speedTitle="Playback speed: the visible window plays in 10 s at 1×"
      onPlayPause={props.onPlayPause}
      onStep={props.onStep}
      onZoom={props.onZoom}
      onReset={props.onReset}
      view={props.view}
      viewOptions={VIEW_OPTIONS}
      onView={props.onView}
      beforeReadout={
        width >= COMPACT_W && (
          <CompactSelect
            label="Step through"
            title="Step through every shown lane, or one"
            testId="qr-step-lane"
            options={laneOptions}
            value={stepLane ?? 'all'}
            onChange={(v) => store.set({ stepLane: v === 'all' ? null : v })}
          />
        )
      }
      afterReadout={
        filter !== null && (
          <button
            type="button"
            className={styles.chip}
            onClick={() => store.set({ filterNode: null, selectedNode: null })}
            title="Lanes show only this operator's events; click (or Esc) to show all"
            data-testid="qr-filter"
          >
            <Icon name="filter" size="sm" /> {operatorName(trace, filter)} <Icon name="times" size="sm" />
          </button>
        )
      }
      status={
        <>
          {props.detailStatus.loading && (
            <Tooltip content="Fetching finer rows for this window; the coarse view is shown meanwhile">
              <span className={styles.loading} data-testid="qr-detail-loading">
                detail…
              </span>
            </Tooltip>
          )}
          {props.detailStatus.error && (
            <Tooltip content={props.detailStatus.error}>
              <Icon name="exclamation-circle" className={styles.error} data-testid="qr-detail-error" />
            </Tooltip>
          )}
          {trace.facts && (
            <Tooltip content={[trace.facts.time, trace.facts.reads, trace.facts.waits].join(' · ')}>
              <span className={styles.weak} data-testid="qr-trace-facts">
                {trace.facts.time.replace(/ \(.*$/, '')}
              </span>
            </Tooltip>
          )}
          {problems.length > 0 && (
            <Tooltip content={problems.join(' ')}>
              <Icon name="exclamation-triangle" className={styles.warn} data-testid="qr-trace-warnings" />
            </Tooltip>
          )}
        </>
      }
    />
  );
}

/** What the user should know about a trace's completeness: truncated, events lost, the server's warnings. */
function traceProblems(trace: ReplayTrace): string[] {
  return [
    trace.truncated ? 'The event cap stopped the read-back: the trace is truncated.' : '',
    trace.lost > 0 ? `The server dropped ${trace.lost.toLocaleString('en-US')} events; the timeline has gaps.` : '',
    ...trace.warnings,
  ].filter(Boolean);
}

/** The transport buttons' tooltips: one trace, or both of a comparison. */
export interface TransportTips {
  play: string;
  pause: string;
  back: string;
  next: string;
  reset: string;
}

const SINGLE_TIPS: TransportTips = {
  play: 'Play (space)',
  pause: 'Pause (space)',
  back: 'Previous event (←)',
  next: 'Next event (→)',
  reset: 'Whole trace (double-click the timeline)',
};

interface TransportProps<V extends string> {
  store: ReplayStore;
  unit: TimeUnit;
  width: number;
  /** The span the readout's precision is chosen for. */
  wholeUs: number;
  endUs: number;
  tips: TransportTips;
  speedTitle?: string;
  onPlayPause: () => void;
  onStep: (dir: 1 | -1) => void;
  onZoom: (factor: number) => void;
  onReset: () => void;
  /** In a small panel one view is shown at a time; this chooses it (null: no choice shown). */
  view: V | null;
  viewOptions: Array<{ label: string; value: V }>;
  onView: (v: V) => void;
  beforeReadout?: React.ReactNode;
  afterReadout?: React.ReactNode;
  /** Status icons, right-aligned before the zoom buttons. */
  status?: React.ReactNode;
}

/**
 * The one toolbar of the replay and the compare mode: play, step, speed,
 * the playhead readout, zoom, the whole trace and the view choice, with
 * slots for what each mode adds.
 */
export function TransportBar<V extends string>(p: TransportProps<V>) {
  const styles = useStyles2(getStyles);
  const playing = useReplay(p.store, (s) => s.playing);
  const speed = useReplay(p.store, (s) => s.speed);
  const win = useReplay(p.store, (s) => s.window);
  const compact = p.width < COMPACT_W;
  return (
    <div className={styles.bar} data-testid="qr-toolbar">
      <IconButton
        name={playing ? 'pause' : 'play'}
        size="lg"
        tooltip={playing ? p.tips.pause : p.tips.play}
        onClick={p.onPlayPause}
        data-testid="qr-play"
      />
      <IconButton name="angle-left" tooltip={p.tips.back} onClick={() => p.onStep(-1)} data-testid="qr-step-back" />
      <IconButton name="angle-right" tooltip={p.tips.next} onClick={() => p.onStep(1)} data-testid="qr-step-next" />
      <CompactSelect
        label="Playback speed"
        title={p.speedTitle}
        testId="qr-speed"
        options={SPEED_OPTIONS}
        value={speed}
        onChange={(v) => p.store.set({ speed: v })}
      />
      {p.beforeReadout}
      <PlayheadReadout
        store={p.store}
        unit={p.unit}
        precisionUs={Math.max(1, span(win) / 1000)}
        wholeUs={p.wholeUs}
        endUs={p.endUs}
        compact={compact}
      />
      {p.afterReadout}
      <span className={styles.spacer} />
      {p.status}
      {!compact && <IconButton name="search-plus" tooltip="Zoom in (+)" onClick={() => p.onZoom(1 / 1.5)} />}
      {!compact && <IconButton name="search-minus" tooltip="Zoom out (−)" onClick={() => p.onZoom(1.5)} />}
      <IconButton name="arrows-h" tooltip={p.tips.reset} onClick={p.onReset} data-testid="qr-reset" />
      {p.view !== null && (
        <CompactSelect label="View" testId="qr-view" options={p.viewOptions} value={p.view} onChange={p.onView} />
      )}
    </div>
  );
}

/** The playhead time: its own component, so only it re-renders on every frame of playback. */
export function PlayheadReadout(props: {
  store: ReplayStore;
  unit: TimeUnit;
  precisionUs: number;
  wholeUs: number;
  endUs: number;
  compact: boolean;
}) {
  const styles = useStyles2(getStyles);
  const t = useReplay(props.store, (s) => s.playheadUs);
  return (
    <span className={styles.time} data-testid="qr-playhead" title="playhead / end of trace">
      {formatUs(t, props.unit, props.precisionUs, props.wholeUs)}
      {!props.compact && (
        <span className={styles.weak}> / {formatUs(props.endUs, props.unit, props.precisionUs, props.wholeUs)}</span>
      )}
    </span>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  bar: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.75),
    height: 32,
    flex: 'none',
    overflow: 'hidden',
    paddingRight: theme.spacing(0.5),
  }),
  time: css({
    fontVariantNumeric: 'tabular-nums',
    whiteSpace: 'nowrap',
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  weak: css({ color: theme.colors.text.secondary }),
  warn: css({ color: theme.colors.warning.text }),
  error: css({ color: theme.colors.error.text }),
  spacer: css({ flex: 1 }),
  loading: css({
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    '@keyframes qrPulse': { '0%': { opacity: 0.3 }, '50%': { opacity: 1 }, '100%': { opacity: 0.3 } },
    animation: 'qrPulse 1.2s ease-in-out infinite',
  }),
  chip: css({
    display: 'inline-flex',
    alignItems: 'center',
    gap: 4,
    border: `1px solid ${theme.colors.primary.border}`,
    background: theme.colors.primary.transparent,
    color: theme.colors.text.primary,
    borderRadius: theme.shape.radius.pill,
    padding: '0 8px',
    height: 22,
    fontSize: theme.typography.bodySmall.fontSize,
    cursor: 'pointer',
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    maxWidth: 220,
  }),
});
