import { DataSourceInstanceSettings, CoreApp } from '@grafana/data';
import { DataSourceWithBackend } from '@grafana/runtime';
import { ReplayQuery, ReplayDataSourceOptions, DEFAULT_QUERY } from './types';

/** The browser side of the datasource: queries go to the Go backend unchanged. */
export class ReplayDataSource extends DataSourceWithBackend<ReplayQuery, ReplayDataSourceOptions> {
  constructor(instanceSettings: DataSourceInstanceSettings<ReplayDataSourceOptions>) {
    super(instanceSettings);
  }

  getDefaultQuery(_: CoreApp): Partial<ReplayQuery> {
    return DEFAULT_QUERY;
  }

  /** An empty batch is not sent: there is nothing to trace. */
  filterQuery(query: ReplayQuery): boolean {
    return !!query.sql?.trim();
  }
}
