import { DataQueryRequest, DataSourceInstanceSettings, dateTime, ScopedVars } from '@grafana/data';
import { BackendSrv, BackendSrvRequest, FetchResponse, setBackendSrv, setTemplateSrv } from '@grafana/runtime';
import { lastValueFrom, Observable, of } from 'rxjs';
import { TestTemplateSrv } from '../test/templateSrv';
import { ReplayDataSource } from './datasource';
import { ReplayDataSourceOptions, ReplayQuery } from './types';

// Grafana's own DataSourceWithBackend.query (@grafana/runtime, not mocked):
// it calls applyTemplateVariables on each target and posts /api/ds/query
// through getBackendSrv().fetch. Only the network (fetch) is replaced.

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

function capture(): BackendSrvRequest[] {
  const posted: BackendSrvRequest[] = [];
  const fetch = (req: BackendSrvRequest): Observable<FetchResponse> => {
    posted.push(req);
    return of({ data: { results: {} }, status: 200, ok: true } as unknown as FetchResponse);
  };
  setBackendSrv({ fetch } as unknown as BackendSrv);
  return posted;
}

function request(targets: ReplayQuery[], scopedVars: ScopedVars = {}): DataQueryRequest<ReplayQuery> {
  const now = dateTime();
  return {
    targets,
    scopedVars,
    range: { from: now, to: now, raw: { from: 'now-5m', to: 'now' } },
    requestId: 'r',
    interval: '1s',
    intervalMs: 1000,
    timezone: 'utc',
    app: 'dashboard',
    startTime: 0,
  } as DataQueryRequest<ReplayQuery>;
}

const posted = (reqs: BackendSrvRequest[]) => (reqs[0].data as { queries: ReplayQuery[] }).queries;

describe('ReplayDataSource with dashboard variables', () => {
  it('posts the values of ${sql} and ${database}, not their names (the replay dashboard)', async () => {
    const sql = "SELECT {fn NOW()}, N'it''s' FROM [dbo].[t]";
    setTemplateSrv(new TestTemplateSrv({ sql, database: 'AdventureWorks' }));
    const reqs = capture();
    const ds = new ReplayDataSource(settings);
    await lastValueFrom(ds.query(request([{ refId: 'A', sql: '${sql}', database: '${database}' }])));
    expect(reqs).toHaveLength(1);
    expect(reqs[0].url).toContain('/api/ds/query');
    expect(posted(reqs)[0]).toMatchObject({ refId: 'A', sql, database: 'AdventureWorks' });
  });

  it('posts stored trace ids from variables, scoped ones first', async () => {
    const a = '0123456789abcdef0123456789abcdef';
    const b = 'fedcba9876543210fedcba9876543210';
    setTemplateSrv(new TestTemplateSrv({ a: b, b }));
    const reqs = capture();
    const ds = new ReplayDataSource(settings);
    const scoped: ScopedVars = { a: { text: a, value: a } };
    await lastValueFrom(
      ds.query(
        request(
          [
            { refId: 'A', queryType: 'view', traceId: '$a' },
            { refId: 'B', queryType: 'compare', traceIds: ['${a}', '${b}'] },
          ],
          scoped
        )
      )
    );
    expect(posted(reqs)[0].traceId).toBe(a);
    expect(posted(reqs)[1].traceIds).toEqual([a, b]);
  });

  it('sends a query whose trace id is a variable holding one, and not one whose ${sql} is empty', () => {
    setTemplateSrv(new TestTemplateSrv({ trace: 'ab'.repeat(16), sql: '', bad: 'nothex' }));
    const ds = new ReplayDataSource(settings);
    expect(ds.filterQuery({ refId: 'A', queryType: 'view', traceId: '${trace}' })).toBe(true);
    expect(ds.filterQuery({ refId: 'A', queryType: 'view', traceId: '${bad}' })).toBe(false);
    expect(ds.filterQuery({ refId: 'A', sql: '${sql}' })).toBe(false);
  });

  it('interpolates queries copied to Explore and names them', () => {
    setTemplateSrv(new TestTemplateSrv({ sql: 'SELECT 1', database: 'tempdb' }));
    const ds = new ReplayDataSource(settings);
    const [q] = ds.interpolateVariablesInQueries([{ refId: 'A', sql: '${sql}', database: '${database}' }], {});
    expect(q).toMatchObject({ sql: 'SELECT 1', database: 'tempdb' });
    expect(ds.getQueryDisplayText(q)).toBe('trace in tempdb: SELECT 1');
  });
});

describe('ReplayDataSource query variables', () => {
  function serve(body: Record<string, unknown>): string[] {
    const urls: string[] = [];
    const fetch = (req: BackendSrvRequest): Observable<FetchResponse> => {
      urls.push(req.url);
      const path = req.url.replace('/api/datasources/uid/queryreplay/resources/', '');
      return of({ data: body[path], status: 200, ok: true } as unknown as FetchResponse);
    };
    setBackendSrv({ fetch } as unknown as BackendSrv);
    return urls;
  }

  it('lists the databases and the stored traces from the resources the editor uses', async () => {
    const id = 'ef'.repeat(16);
    const urls = serve({
      databases: [{ name: 'AdventureWorks', databaseId: 5, state: 'ONLINE' }],
      traces: [
        { traceId: id, statement: 'SELECT 1', database: 'db', startedAt: 'T', events: 1, durationUs: 1, bytes: 1 },
      ],
    });
    const ds = new ReplayDataSource(settings);
    expect(await ds.metricFindQuery('databases')).toEqual([{ text: 'AdventureWorks', value: 'AdventureWorks' }]);
    expect(await ds.metricFindQuery('traces')).toEqual([{ text: 'SELECT 1 (T)', value: id }]);
    expect(urls).toEqual([
      '/api/datasources/uid/queryreplay/resources/databases',
      '/api/datasources/uid/queryreplay/resources/traces',
    ]);
    await expect(ds.metricFindQuery('users')).rejects.toThrow(/databases, traces/);
  });
});
