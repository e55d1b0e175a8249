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
  { label: 'Pages', value: 'pages' },
  { label: 'Locks', value: 'locks' },
  { label: 'Stack', value: 'stack' },
];

export function Toolbar(props: Props) {
  const { trace, store, unit, width, stepLanes } = props;
  const styles = useStyles2(getStyles);
  const playing = useReplay(store, (s) => s.playing);
  const speed = useReplay(store, (s) => s.speed);
  const win = useReplay(store, (s) => s.window);
  const filter = useReplay(store, (s) => s.filterNode);
  const stepLane = useReplay(store, (s) => s.stepLane);
  const compact = width < 640;
  const laneOptions: Array<{ label: string; value: EventLaneName | 'all' }> = [
    { label: 'all lanes', value: 'all' },
    ...stepLanes.map((l) => ({ label: LANE_DEFS[l].label, value: l })),
  ];
  const problems = [
    trace.truncated ? 'The event cap stopped the read-back: the trace is truncated.' : '',
    trace.lost > 0 ? `The server dropped ${trace.lost.toLocaleString('en-US')} events; the timeline has gaps.` : '',
    ...trace.warnings,
  ].filter(Boolean);
  const whole = span({ fromUs: trace.startUs, toUs: trace.endUs });
  return (
    <div className={styles.bar} data-testid="qr-toolbar">
      <IconButton
        name={playing ? 'pause' : 'play'}
        size="lg"
        tooltip={playing ? 'Pause (space)' : 'Play (space)'}
        onClick={props.onPlayPause}
        data-testid="qr-play"
      />
      <IconButton
        name="angle-left"
        tooltip="Previous event (←)"
        onClick={() => props.onStep(-1)}
        data-testid="qr-step-back"
      />
      <IconButton
        name="angle-right"
        tooltip="Next event (→)"
        onClick={() => props.onStep(1)}
        data-testid="qr-step-next"
      />
      <CompactSelect
        label="Playback speed"
        title="Playback speed: the visible window plays in 10 s at 1×"
        testId="qr-speed"
        options={SPEED_OPTIONS}
        value={speed}
        onChange={(v) => store.set({ speed: v })}
      />
      {!compact && (
        <CompactSelect
          label="Step through"
          title="Step through every shown lane, or one"
          testId="qr-step-lane"
          options={laneOptions}
          value={stepLane ?? 'all'}
          onChange={(v) => store.set({ stepLane: v === 'all' ? null : v })}
        />
      )}
      <PlayheadReadout
        store={store}
        unit={unit}
        precisionUs={Math.max(1, span(win) / 1000)}
        wholeUs={whole}
        endUs={trace.endUs}
        compact={compact}
      />
      {filter !== null && (
        <button
          type="button"
          className={styles.chip}
          onClick={() => store.set({ filterNode: null, selectedNode: null })}
          title="Lanes show only this operator's events; click (or Esc) to show all"
          data-testid="qr-filter"
        >
          <Icon name="filter" size="sm" /> {operatorName(trace, filter)} <Icon name="times" size="sm" />
        </button>
      )}
      <span className={styles.spacer} />
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
      {problems.length > 0 && (
        <Tooltip content={problems.join(' ')}>
          <Icon name="exclamation-triangle" className={styles.warn} data-testid="qr-trace-warnings" />
        </Tooltip>
      )}
      {!compact && <IconButton name="search-plus" tooltip="Zoom in (+)" onClick={() => props.onZoom(1 / 1.5)} />}
      {!compact && <IconButton name="search-minus" tooltip="Zoom out (−)" onClick={() => props.onZoom(1.5)} />}
      <IconButton
        name="arrows-h"
        tooltip="Whole trace (double-click the timeline)"
        onClick={props.onReset}
        data-testid="qr-reset"
      />
      {props.view !== null && (
        <CompactSelect
          label="View"
          testId="qr-view"
          options={VIEW_OPTIONS}
          value={props.view}
          onChange={props.onView}
        />
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
