import { PanelPlugin } from '@grafana/data';
import { ReplayOptions, ReplayPanel } from './ReplayPanel';

export const plugin = new PanelPlugin<ReplayOptions>(ReplayPanel).setPanelOptions((builder) =>
  builder.addBooleanSwitch({
    path: 'showSkipped',
    name: 'List frames that are not lanes',
    defaultValue: true,
  })
);
