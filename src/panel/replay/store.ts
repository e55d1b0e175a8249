import { WindowUs } from '../model/trace';
import { EventLaneName } from '../model/lanes';

/**
 * The replay's interactive state, outside React: the playhead moves sixty
 * times a second, so the canvases subscribe to the store and draw
 * imperatively, and React views subscribe with a selector and re-render only
 * when what they show changed.
 */

export interface Selection {
  lane: EventLaneName;
  /** Entry index in the lane the selection was made on. */
  index: number;
  /** The lane data it indexes is a zoomed-in detail response, not the base frames. */
  detail: boolean;
  /** Frame row, for the fields. */
  row: number;
  nodeId: number | null;
  startUs: number;
  endUs: number;
}

/**
 * Events and operators picked out on the timeline together (a finding's
 * evidence, an operator pair of a comparison); drawn on the overlay.
 */
export interface Highlight {
  /** What asked for it ("finding:2", "compare:3"), so its view can show it as selected. */
  source: string;
  nodes: number[];
  events: Array<{ lane: EventLaneName; startUs: number; endUs: number }>;
  /** The event stepped to (index into events), or -1. */
  current: number;
  /** The span the highlight is about (drawn on the axis), or null. */
  span: { fromUs: number; toUs: number } | null;
}

export interface ReplayState {
  playheadUs: number;
  playing: boolean;
  speed: number;
  window: WindowUs;
  /** Lanes show only this operator's events. */
  filterNode: number | null;
  /** The operator of the selected event (or clicked in the plan tree). */
  selectedNode: number | null;
  selected: Selection | null;
  /** Step only through this lane; null steps through every shown lane. */
  stepLane: EventLaneName | null;
  /** Picked-out events and operators; null when nothing is. */
  highlight?: Highlight | null;
}

type Listener = () => void;

export class ReplayStore {
  private state: ReplayState;
  private listeners = new Set<Listener>();

  constructor(initial: ReplayState) {
    this.state = initial;
  }

  get = (): ReplayState => this.state;

  set(patch: Partial<ReplayState>): void {
    let changed = false;
    for (const k of Object.keys(patch) as Array<keyof ReplayState>) {
      if (this.state[k] !== patch[k]) {
        changed = true;
        break;
      }
    }
    if (!changed) {
      return;
    }
    this.state = { ...this.state, ...patch };
    this.listeners.forEach((l) => l());
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
}
