import { DataSourceInstanceSettings, CoreApp } from '@grafana/data';
import { DataSourceWithBackend } from '@grafana/runtime';
import { ReplayQuery, ReplayDataSourceOptions, DEFAULT_QUERY, isRunnable } from './types';
import { HealthReport } from './health';

/** How long the query editors reuse one health report (persona and sysadmin change rarely). */
const HEALTH_TTL_MS = 5 * 60_000;

/** The browser side of the datasource: queries go to the Go backend unchanged. */
export class ReplayDataSource extends DataSourceWithBackend<ReplayQuery, ReplayDataSourceOptions> {
  /** The non-secret settings, for editors that show only what the settings allow. */
  readonly settings: ReplayDataSourceOptions;

  constructor(instanceSettings: DataSourceInstanceSettings<ReplayDataSourceOptions>) {
    super(instanceSettings);
    this.settings = instanceSettings.jsonData ?? {};
  }

  private healthAt = 0;
  private healthReport: Promise<HealthReport> | null = null;

  /**
   * GET resources/health, shared by every editor of this data source for a
   * few minutes: each call otherwise connects to the server. A failed
   * request is not kept.
   */
  health(): Promise<HealthReport> {
    if (!this.healthReport || Date.now() - this.healthAt > HEALTH_TTL_MS) {
      this.healthAt = Date.now();
      const p = this.getResource<HealthReport>('health');
      this.healthReport = p;
      p.catch(() => {
        if (this.healthReport === p) {
          this.healthReport = null;
        }
      });
    }
    return this.healthReport;
  }

  getDefaultQuery(_: CoreApp): Partial<ReplayQuery> {
    return DEFAULT_QUERY;
  }

  /** A query missing what its type needs (a batch, a trace id) is not sent. */
  filterQuery(query: ReplayQuery): boolean {
    return isRunnable(query);
  }
}
