/**
 * The lanes of a replay, top to bottom, as docs/frames.md §3.5 names their
 * frames. The Plan lane is not a lane frame: it is drawn from the
 * `operators` and `phases` frames.
 */
export const EVENT_LANES = ['read', 'write', 'lock', 'wait', 'memory', 'split', 'log', 'io'] as const;
export type EventLaneName = (typeof EVENT_LANES)[number];
export type LaneName = 'plan' | EventLaneName;
export const ALL_LANES: LaneName[] = ['plan', ...EVENT_LANES];

export interface LaneDef {
  name: LaneName;
  label: string;
  /** A Grafana named colour (theme.visualization.getColorByName). */
  color: string;
  /** Interval lanes have meaningful ends; the others are point events. */
  intervals: boolean;
  /** What the lane shows, for the legend and the options editor. */
  description: string;
}

export const LANE_DEFS: Record<LaneName, LaneDef> = {
  plan: {
    name: 'plan',
    label: 'Plan',
    color: 'text',
    intervals: true,
    description: 'one bar per operator, with its phases',
  },
  read: {
    name: 'read',
    label: 'Read',
    color: 'blue',
    intervals: false,
    description: 'page reads (physical_page_read)',
  },
  write: { name: 'write', label: 'Write', color: 'orange', intervals: false, description: 'page writes' },
  lock: { name: 'lock', label: 'Lock', color: 'purple', intervals: true, description: 'locks from acquire to release' },
  wait: { name: 'wait', label: 'Wait', color: 'yellow', intervals: true, description: 'waits, by wait type' },
  memory: {
    name: 'memory',
    label: 'Memory/Spill',
    color: 'red',
    intervals: false,
    description: 'grant usage and spills',
  },
  split: { name: 'split', label: 'Split', color: 'green', intervals: false, description: 'page splits' },
  log: {
    name: 'log',
    label: 'Log',
    color: 'semi-dark-green',
    intervals: false,
    description: 'log records and flushes',
  },
  io: { name: 'io', label: 'I/O', color: 'light-blue', intervals: true, description: 'file I/O requests' },
};

export function isEventLane(name: string): name is EventLaneName {
  return (EVENT_LANES as readonly string[]).includes(name);
}
