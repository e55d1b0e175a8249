/** The plugins this app bundles; the ids match the nested plugin.json files. */
export interface NestedPlugin {
  id: string;
  type: 'datasource' | 'panel';
  name: string;
  path: string;
  purpose: string;
}

export const NESTED_PLUGINS: NestedPlugin[] = [
  {
    id: 'queryreplay-sqlserver-datasource',
    type: 'datasource',
    name: 'QueryReplay SQL Server',
    path: 'datasource/plugin.json',
    purpose: 'runs traces on demand and returns the lanes as data frames',
  },
  {
    id: 'queryreplay-replay-panel',
    type: 'panel',
    name: 'Query Replay',
    path: 'panel/plugin.json',
    purpose: 'replays a trace with a playhead, lanes, the plan, page maps and call stacks',
  },
];
