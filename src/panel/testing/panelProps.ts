import { DataFrame, DataQueryRequest, EventBusSrv, LoadingState, PanelProps, getDefaultTimeRange } from '@grafana/data';
import { DEFAULT_OPTIONS, ReplayOptions } from '../types';

/** Panel props as Grafana passes them, for frames from the Go side. */
export function props(
  series: DataFrame[],
  width = 1000,
  height = 420,
  options: Partial<ReplayOptions> = {},
  request?: Partial<DataQueryRequest>
): PanelProps<ReplayOptions> {
  return {
    id: 1,
    data: {
      series,
      state: LoadingState.Done,
      timeRange: getDefaultTimeRange(),
      request: request as DataQueryRequest | undefined,
    },
    timeRange: getDefaultTimeRange(),
    timeZone: 'utc',
    options: { ...DEFAULT_OPTIONS, ...options },
    width,
    height,
    transparent: false,
    fieldConfig: { defaults: {}, overrides: [] },
    renderCounter: 0,
    title: 'Replay',
    eventBus: new EventBusSrv(),
    onOptionsChange: jest.fn(),
    onFieldConfigChange: jest.fn(),
    replaceVariables: (s: string) => s,
    onChangeTimeRange: jest.fn(),
  } as unknown as PanelProps<ReplayOptions>;
}
