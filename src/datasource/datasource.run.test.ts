import fs from 'node:fs';
import path from 'node:path';
import { DataQueryRequest, DataSourceInstanceSettings, dateTime } from '@grafana/data';
import {
  BackendSrv,
  BackendSrvRequest,
  FetchResponse,
  locationService,
  setBackendSrv,
  setTemplateSrv,
} from '@grafana/runtime';
import { lastValueFrom, Observable, of } from 'rxjs';
import { TestTemplateSrv } from '../test/templateSrv';
import { ReplayDataSource, RUN_LINK_PARAM } from './datasource';
import { ReplayDataSourceOptions, ReplayQuery, runRequest } from './types';

// When a trace runs (docs/frames.md §1): Grafana's own
// DataSourceWithBackend.query (@grafana/runtime, not mocked) posts
// /api/ds/query on every load, refresh and time-range change; only the
// network (fetch) is replaced, and locationService is Grafana's own.

const settings = {
  id: 1,
  uid: 'queryreplay',
  type: 'queryreplay-sqlserver-datasource',
  name: 'QueryReplay',
  access: 'proxy',
  jsonData: {},
  meta: {},
  readOnly: false,
} as unknown as DataSourceInstanceSettings<ReplayDataSourceOptions>;

function capture(): Array<{ queries: ReplayQuery[] }> {
  const bodies: Array<{ queries: ReplayQuery[] }> = [];
  const fetch = (req: BackendSrvRequest): Observable<FetchResponse> => {
    bodies.push(req.data as { queries: ReplayQuery[] });
    return of({ data: { results: {} }, status: 200, ok: true } as unknown as FetchResponse);
  };
  setBackendSrv({ fetch } as unknown as BackendSrv);
  return bodies;
}

function request(targets: ReplayQuery[], panelId = 1): DataQueryRequest<ReplayQuery> {
  const now = dateTime();
  return {
    targets,
    panelId,
    scopedVars: {},
    range: { from: now, to: now, raw: { from: 'now-5m', to: 'now' } },
    requestId: 'r',
    interval: '1s',
    intervalMs: 1000,
    timezone: 'utc',
    app: 'dashboard',
    startTime: 0,
  } as DataQueryRequest<ReplayQuery>;
}

/** The backend's pattern for a run request, read from pkg/plugin/runonce.go (Go's RE2 syntax here is JS's too). */
function backendRunPattern(): RegExp {
  const src = fs.readFileSync(path.join(__dirname, '../../pkg/plugin/runonce.go'), 'utf8');
  const m = /runPattern = regexp\.MustCompile\(`([^`]+)`\)/.exec(src);
  if (!m) {
    throw new Error('pkg/plugin/runonce.go has no runPattern');
  }
  return new RegExp(m[1]);
}

const saved: ReplayQuery = {
  refId: 'A',
  queryType: 'trace',
  sql: 'SELECT 1',
  options: { clearBufferPool: true },
};

describe('when a trace runs', () => {
  beforeEach(() => {
    setTemplateSrv(new TestTemplateSrv({}));
    locationService.push('/d/replay/replay');
  });

  it('makes run requests the backend accepts: stamped now, never twice the same', () => {
    const pattern = backendRunPattern();
    const before = Date.now();
    const a = runRequest();
    const b = runRequest();
    expect(a).toMatch(pattern);
    expect(b).toMatch(pattern);
    expect(a).not.toBe(b);
    const stamp = Number(a.split('-')[0]);
    expect(stamp).toBeGreaterThanOrEqual(before);
    expect(stamp).toBeLessThanOrEqual(Date.now());
  });

  it('posts a saved trace query on load and refresh without a run request of its own making', async () => {
    const bodies = capture();
    const ds = new ReplayDataSource(settings);
    await lastValueFrom(ds.query(request([saved])));
    await lastValueFrom(ds.query(request([saved])));
    expect(bodies).toHaveLength(2);
    for (const b of bodies) {
      expect(b.queries[0].run).toBeUndefined();
      expect(b.queries[0].sql).toBe('SELECT 1');
    }
  });

  it('posts the run request Execute saved, unchanged, on every refresh (the backend answers it once)', async () => {
    const bodies = capture();
    const ds = new ReplayDataSource(settings);
    const executed = { ...saved, run: runRequest() };
    await lastValueFrom(ds.query(request([executed])));
    await lastValueFrom(ds.query(request([executed])));
    expect(bodies.map((b) => b.queries[0].run)).toEqual([executed.run, executed.run]);
  });

  it(`runs once per page what a dashboard link asks with ?${RUN_LINK_PARAM}=…, reused by refresh and zoom`, async () => {
    locationService.push(`/d/replay/replay?var-sql=x&${RUN_LINK_PARAM}=1`);
    const bodies = capture();
    const ds = new ReplayDataSource(settings);
    const probe: ReplayQuery = { refId: 'P', queryType: 'probe', sql: 'SELECT 1' };
    const view: ReplayQuery = { refId: 'V', queryType: 'view', traceId: 'ab'.repeat(16) };
    await lastValueFrom(ds.query(request([saved, probe, view])));
    await lastValueFrom(ds.query(request([saved, probe, view]))); // refresh
    await lastValueFrom(ds.query(request([saved], 2))); // another panel
    const [first, refresh, other] = bodies.map((b) => b.queries);
    expect(first[0].run).toMatch(backendRunPattern());
    expect(refresh[0].run).toBe(first[0].run);
    expect(other[0].run).toMatch(backendRunPattern());
    expect(other[0].run).not.toBe(first[0].run);
    expect(first[1].run).toBeUndefined(); // probes run on schedule anyway
    expect(first[2].run).toBeUndefined();

    // a new statement typed into the dashboard's variable is a new ask; going back reuses the first
    setTemplateSrv(new TestTemplateSrv({ sql: 'SELECT 2' }));
    const typed = { ...saved, sql: '${sql}' };
    await lastValueFrom(ds.query(request([typed])));
    await lastValueFrom(ds.query(request([typed])));
    expect(bodies[3].queries[0].sql).toBe('SELECT 2');
    expect(bodies[3].queries[0].run).toMatch(backendRunPattern());
    expect(bodies[3].queries[0].run).not.toBe(first[0].run);
    expect(bodies[4].queries[0].run).toBe(bodies[3].queries[0].run);
    bodies.splice(3, 2);

    // the same dashboard without the ask: nothing runs
    locationService.push('/d/replay/replay?var-sql=x');
    await lastValueFrom(ds.query(request([saved])));
    expect(bodies[3].queries[0].run).toBeUndefined();
  });

  it('interpolates queryHash like every other string of the query', async () => {
    setTemplateSrv(new TestTemplateSrv({ hash: '0x1A2B3C4D5E6F7081' }));
    const bodies = capture();
    const ds = new ReplayDataSource(settings);
    await lastValueFrom(
      ds.query(request([{ refId: 'A', queryType: 'bundle', traceId: 'ab'.repeat(16), queryHash: '${hash}' }]))
    );
    expect(bodies[0].queries[0].queryHash).toBe('0x1A2B3C4D5E6F7081');
    const [q] = ds.interpolateVariablesInQueries([{ refId: 'A', queryHash: '$hash' }], {});
    expect(q.queryHash).toBe('0x1A2B3C4D5E6F7081');
  });
});
