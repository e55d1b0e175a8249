import { PanelPlugin, SelectableValue } from '@grafana/data';
import { ALL_LANES, LANE_DEFS, LaneName } from './model/lanes';
import { ReplayPanel } from './ReplayPanel';
import { DEFAULT_OPTIONS, ReplayOptions } from './types';

const LANE_OPTIONS: Array<SelectableValue<LaneName>> = ALL_LANES.map((l) => ({
  label: LANE_DEFS[l].label,
  value: l,
  description: LANE_DEFS[l].description,
}));

export const plugin = new PanelPlugin<ReplayOptions>(ReplayPanel).setPanelOptions((builder) =>
  builder
    .addMultiSelect({
      path: 'lanes',
      name: 'Lanes',
      description: 'Lanes shown, in this order: Plan, Read, Write, Lock, Wait, Memory/Spill, Split, Log, I/O.',
      defaultValue: DEFAULT_OPTIONS.lanes,
      settings: {
        // the multi-select's value is the array, its options are single lanes
        options: LANE_OPTIONS as unknown as Array<SelectableValue<LaneName[]>>,
      },
    })
    .addRadio({
      path: 'colorBy',
      name: 'Colour events by',
      defaultValue: DEFAULT_OPTIONS.colorBy,
      settings: {
        options: [
          { label: 'Operator', value: 'operator', description: 'each plan operator has its own colour' },
          { label: 'Lane', value: 'lane', description: 'one colour per lane' },
        ],
      },
    })
    .addRadio({
      path: 'timeUnit',
      name: 'Time unit',
      defaultValue: DEFAULT_OPTIONS.timeUnit,
      settings: {
        options: [
          { label: 'Auto', value: 'auto', description: 'µs for short windows, ms or s for longer ones' },
          { label: 'µs', value: 'us' },
          { label: 'ms', value: 'ms' },
        ],
      },
    })
    .addRadio({
      path: 'linkedView',
      name: 'Linked view',
      description: 'What opens beside the timeline (in a small panel, pick the view in the toolbar).',
      defaultValue: DEFAULT_OPTIONS.linkedView,
      settings: {
        options: [
          { label: 'Findings', value: 'findings' },
          { label: 'Plan', value: 'plan' },
          { label: 'Plan diagram', value: 'diagram' },
          { label: 'Pages', value: 'pages' },
          { label: 'Locks', value: 'locks' },
          { label: 'Event & stack', value: 'stack' },
          { label: 'Table I/O & waits', value: 'summary' },
        ],
      },
    })
    .addBooleanSwitch({
      path: 'fetchDetail',
      name: 'Fetch detail when zooming',
      description:
        'Zooming into a binned lane asks the datasource for finer rows of that window (a view query; nothing runs on SQL Server).',
      defaultValue: DEFAULT_OPTIONS.fetchDetail,
    })
);
