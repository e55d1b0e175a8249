import { DataSourceInstanceSettings, CoreApp } from '@grafana/data';
import { DataSourceWithBackend } from '@grafana/runtime';
import { ReplayQuery, ReplayDataSourceOptions, DEFAULT_QUERY, isRunnable } from './types';

/** The browser side of the datasource: queries go to the Go backend unchanged. */
export class ReplayDataSource extends DataSourceWithBackend<ReplayQuery, ReplayDataSourceOptions> {
  /** The non-secret settings, for editors that show only what the settings allow. */
  readonly settings: ReplayDataSourceOptions;

  constructor(instanceSettings: DataSourceInstanceSettings<ReplayDataSourceOptions>) {
    super(instanceSettings);
    this.settings = instanceSettings.jsonData ?? {};
  }

  getDefaultQuery(_: CoreApp): Partial<ReplayQuery> {
    return DEFAULT_QUERY;
  }

  /** A query missing what its type needs (a batch, a trace id) is not sent. */
  filterQuery(query: ReplayQuery): boolean {
    return isRunnable(query);
  }
}
