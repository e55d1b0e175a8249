import { LaneName, ALL_LANES } from './model/lanes';
import { TimeUnit } from './replay/scale';
import { ColorBy } from './render/timeline';

export type LinkedView = 'statements' | 'findings' | 'plan' | 'diagram' | 'pages' | 'locks' | 'stack' | 'summary';

/** Panel options (module.ts builds their editors). */
export interface ReplayOptions {
  /** Lanes shown, top to bottom in the fixed lane order. */
  lanes: LaneName[];
  colorBy: ColorBy;
  timeUnit: TimeUnit;
  /** The linked view open beside (or, in a small panel, instead of) the timeline. */
  linkedView: LinkedView;
  /** Ask the datasource for finer rows when zooming into binned lanes. */
  fetchDetail: boolean;
}

export const DEFAULT_OPTIONS: ReplayOptions = {
  lanes: ALL_LANES,
  colorBy: 'operator',
  timeUnit: 'auto',
  linkedView: 'plan',
  fetchDetail: true,
};

/** Options with defaults for anything missing (old dashboards, provisioning files). */
export function withDefaults(o: Partial<ReplayOptions> | undefined): ReplayOptions {
  const asked = o?.lanes;
  const lanes = Array.isArray(asked) && asked.length > 0 ? ALL_LANES.filter((l) => asked.includes(l)) : ALL_LANES;
  return { ...DEFAULT_OPTIONS, ...o, lanes };
}
