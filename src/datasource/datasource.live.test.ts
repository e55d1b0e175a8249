import fs from 'node:fs';
import path from 'node:path';
import {
  DataFrameJSON,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceInstanceSettings,
  LoadingState,
  StreamingDataFrame,
  dateTime,
} from '@grafana/data';
import {
  BackendSrv,
  BackendSrvRequest,
  FetchResponse,
  GrafanaLiveSrv,
  LiveDataStreamOptions,
  setBackendSrv,
  setGrafanaLiveSrv,
  setTemplateSrv,
} from '@grafana/runtime';
import { Observable, Subject, of } from 'rxjs';
import { TestTemplateSrv } from '../test/templateSrv';
import { ReplayDataSource } from './datasource';
import { ReplayDataSourceOptions, ReplayQuery } from './types';
import { liveFromFrames } from '../panel/live/model';

// A live trace through Grafana's own code path (docs/frames.md §3.14):
// @grafana/runtime's DataSourceWithBackend.query (not mocked) posts
// /api/ds/query; the answer's frame has meta.channel, so the runtime calls
// getGrafanaLiveSrv().getDataStream with our streamOptionsProvider. The
// fake Live service below stands for Grafana's transport only: it keeps a
// @grafana/data StreamingDataFrame per stream and pushes each message from
// the channel into it, as Grafana's live data stream does. The messages are
// the Go side's own live frames (pkg/frames/testdata/live_stream.json).

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

const stream: DataFrameJSON[] = JSON.parse(
  fs.readFileSync(path.join(__dirname, '../../pkg/frames/testdata/live_stream.json'), 'utf8')
);

const CHANNEL = 'ds/queryreplay/trace/4f1c';

/** The /api/ds/query answer of a live trace query: the first live frame with its channel. */
function answer(): unknown {
  const first = JSON.parse(JSON.stringify(stream[0])) as DataFrameJSON;
  first.schema!.meta = { ...first.schema!.meta, channel: CHANNEL };
  return { results: { A: { status: 200, frames: [first] } } };
}

class FakeLive {
  opened: LiveDataStreamOptions[] = [];
  channel = new Subject<DataFrameJSON | 'end'>();
  getDataStream(options: LiveDataStreamOptions): Observable<DataQueryResponse> {
    this.opened.push(options);
    const frame = StreamingDataFrame.fromDataFrameJSON(options.frame!, options.buffer);
    return new Observable<DataQueryResponse>((sub) => {
      sub.next({ key: 'live', state: LoadingState.Streaming, data: [frame] });
      const s = this.channel.subscribe((msg) => {
        if (msg === 'end') {
          sub.next({ key: 'live', state: LoadingState.Done, data: [frame] });
          sub.complete();
          return;
        }
        frame.push(msg);
        sub.next({ key: 'live', state: LoadingState.Streaming, data: [frame] });
      });
      return () => s.unsubscribe();
    });
  }
}

function request(targets: ReplayQuery[]): DataQueryRequest<ReplayQuery> {
  const now = dateTime();
  return {
    targets,
    scopedVars: {},
    range: { from: now, to: now, raw: { from: 'now-5m', to: 'now' } },
    requestId: 'r',
    interval: '1s',
    intervalMs: 1000,
    maxDataPoints: 2,
    timezone: 'utc',
    app: 'dashboard',
    startTime: 0,
  } as DataQueryRequest<ReplayQuery>;
}

test('a live trace query streams, its data grows and finishes with the stored trace', () => {
  setTemplateSrv(new TestTemplateSrv({}));
  const sent: unknown[] = [];
  setBackendSrv({
    fetch: (req: BackendSrvRequest) => {
      sent.push(req.data);
      return of({ data: answer(), status: 200, ok: true } as unknown as FetchResponse);
    },
  } as unknown as BackendSrv);
  const live = new FakeLive();
  setGrafanaLiveSrv(live as unknown as GrafanaLiveSrv);
  const ds = new ReplayDataSource(settings);
  const seen: DataQueryResponse[] = [];
  // read at each emission: the StreamingDataFrame is the same object, changed in place
  const read: Array<ReturnType<typeof liveFromFrames>> = [];
  const sub = ds
    .query(request([{ refId: 'A', queryType: 'trace', sql: 'SELECT 1', live: true, run: '1-00000000000000aa' }]))
    .subscribe((r) => {
      seen.push(r);
      read.push(liveFromFrames(r.data));
    });

  expect((sent[0] as { queries: ReplayQuery[] }).queries[0].live).toBe(true);
  expect(live.opened).toHaveLength(1);
  expect(live.opened[0].addr).toEqual({ scope: 'ds', stream: 'queryreplay', path: 'trace/4f1c' });
  expect(live.opened[0].buffer?.action).toBe('replace');

  const snaps = () => read;
  expect(snaps()[0]?.status.seq).toBe(1);
  expect(snaps()[0]?.channel).toBe(CHANNEL);

  for (const msg of stream.slice(1)) {
    live.channel.next(msg);
  }
  live.channel.next('end');
  sub.unsubscribe();

  const all = snaps();
  expect(all.every((s) => s !== null)).toBe(true);
  // the data grows: later updates, more rows so far, and (replace, not
  // append, with maxDataPoints 2) one row per operator throughout
  expect(all.map((s) => s!.status.seq)).toEqual([1, 2, 3, 3]);
  const scan = (i: number) => all[i]!.operators.find((o) => o.nodeId === 2)!;
  expect(scan(0).rows).toBe(0);
  expect(scan(1).rows).toBe(2400);
  expect(scan(1).state).toBe('running');
  expect(all.every((s) => s!.operators.length === 3)).toBe(true);
  expect(all[1]!.events.length).toBeGreaterThan(all[0]!.events.length);
  // the plan sent once is still there
  expect(all[2]!.planXml).toContain('RelOp');
  // and it finishes, naming the stored trace
  const last = all[all.length - 1]!;
  expect(last.status.done).toBe(true);
  expect(last.status.traceId).toBe('0190d5c2a0e87c3b9a51e2f4c6d8b0a1');
  expect(seen[seen.length - 1].state).toBe(LoadingState.Done);
});
