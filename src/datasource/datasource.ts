import {
  CoreApp,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceInstanceSettings,
  MetricFindValue,
  ScopedVars,
  StreamingFrameAction,
} from '@grafana/data';
import { DataSourceWithBackend, StreamOptionsProvider, getTemplateSrv, locationService } from '@grafana/runtime';
import { Observable } from 'rxjs';
import { ReplayQuery, ReplayDataSourceOptions, DEFAULT_QUERY, isRunnable, runRequest } from './types';
import { HealthReport } from './health';
import {
  databaseOptions,
  DatabaseEntry,
  interpolateQuery,
  parseVariableQuery,
  queryDisplayText,
  Replace,
  traceOptions,
  TraceEntry,
} from './variables';

/** Grafana's TemplateSrv.replace, looked up per call: Grafana sets the singleton after plugins load. */
const replace: Replace = (text, scopedVars, format) => getTemplateSrv().replace(text, scopedVars, format);

/**
 * The URL parameter by which a dashboard link asks the trace queries of the
 * page it opens to run once: `/d/<uid>/<slug>?var-sql=…&queryreplayRun=<any text>`
 * (docs/frames.md §1, "When a trace runs").
 */
export const RUN_LINK_PARAM = 'queryreplayRun';

/** How many link-made run requests a page keeps (one per link value, panel and query). */
const LINK_RUNS_KEPT = 256;

/** How long the query editors reuse one health report (persona and sysadmin change rarely). */
const HEALTH_TTL_MS = 5 * 60_000;

/** The browser side of the datasource: queries go to the Go backend with dashboard variables replaced. */
export class ReplayDataSource extends DataSourceWithBackend<ReplayQuery, ReplayDataSourceOptions> {
  /** The non-secret settings, for editors that show only what the settings allow. */
  readonly settings: ReplayDataSourceOptions;

  constructor(instanceSettings: DataSourceInstanceSettings<ReplayDataSourceOptions>) {
    super(instanceSettings);
    this.settings = instanceSettings.jsonData ?? {};
  }

  /**
   * A live trace's frame (docs/frames.md §3.14) is the whole trace so far
   * each time, so Grafana's StreamingDataFrame replaces it instead of
   * appending rows (and never trims it to maxDataPoints).
   */
  streamOptionsProvider: StreamOptionsProvider<ReplayQuery> = () => ({ action: StreamingFrameAction.Replace });

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

  /** Run requests this page made for a dashboard link's ask, by link value, panel and query. */
  private linkRuns = new Map<string, string>();

  /**
   * Grafana's query, after a dashboard link's ask (RUN_LINK_PARAM) is turned
   * into run requests. A trace runs only for a fresh run request (the
   * editor's Execute makes one); Grafana re-sends the saved query on every
   * load, refresh and time-range change, and the backend answers a used or
   * stale request from the stored trace, never by running the batch again.
   * The run request a link asked for is made once per page and statement and
   * reused by every refresh and zoom.
   */
  query(request: DataQueryRequest<ReplayQuery>): Observable<DataQueryResponse> {
    return super.query(this.withLinkRuns(request));
  }

  private withLinkRuns(request: DataQueryRequest<ReplayQuery>): DataQueryRequest<ReplayQuery> {
    const asked = locationService.getSearchObject()[RUN_LINK_PARAM];
    if (asked === undefined || asked === null || asked === false || asked === '') {
      return request;
    }
    const targets = request.targets.map((t) => {
      if ((t.queryType ?? 'trace') !== 'trace' || t.hide) {
        return t;
      }
      // the statement as it will be sent: a new one typed into the
      // dashboard's variables is a new ask, a refresh of the same is not
      const sent = interpolateQuery(t, request.scopedVars, replace);
      const key = JSON.stringify([String(asked), request.panelId ?? '', t.refId, sent.sql ?? '', sent.database ?? '']);
      let run = this.linkRuns.get(key);
      if (!run) {
        if (this.linkRuns.size >= LINK_RUNS_KEPT) {
          this.linkRuns.clear();
        }
        run = runRequest();
        this.linkRuns.set(key, run);
      }
      return { ...t, run };
    });
    return { ...request, targets };
  }

  getDefaultQuery(_: CoreApp): Partial<ReplayQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * A query missing what its type needs (a batch, a trace id) is not sent.
   * Judged on the interpolated query: `${trace}` is not 32 hex digits but its
   * value may be, and an empty `${sql}` leaves nothing to trace.
   */
  filterQuery(query: ReplayQuery): boolean {
    return isRunnable(interpolateQuery(query, undefined, replace));
  }

  /**
   * Called by DataSourceWithBackend.query for each target before it posts
   * /api/ds/query; the backend never sees `${var}`.
   */
  applyTemplateVariables(query: ReplayQuery, scopedVars: ScopedVars): ReplayQuery {
    return interpolateQuery(query, scopedVars, replace);
  }

  /** Explore ("split", "open in Explore") interpolates through this before copying queries. */
  interpolateVariablesInQueries(queries: ReplayQuery[], scopedVars: ScopedVars): ReplayQuery[] {
    return queries.map((q) => interpolateQuery(q, scopedVars, replace));
  }

  /**
   * A query variable's values: `databases` (the server's online databases) or
   * `traces` (the stored traces, valued by trace id). Grafana calls this for
   * a data source without a `variables` support object, with the variable's
   * text query.
   */
  async metricFindQuery(query: unknown): Promise<MetricFindValue[]> {
    switch (parseVariableQuery(query)) {
      case 'databases':
        return databaseOptions(await this.getResource<DatabaseEntry[]>('databases'));
      case 'traces':
        return traceOptions(await this.getResource<TraceEntry[]>('traces'));
    }
  }

  getQueryDisplayText(query: ReplayQuery): string {
    return queryDisplayText(query);
  }
}
