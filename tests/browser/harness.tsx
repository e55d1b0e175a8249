// The browser harness page: mounts the real replay panel with frames from
// the real datasource, fetched through pkg/viewer's /api/ds/query and
// converted with @grafana/runtime's toDataQueryResponse, as Grafana does.
// Built with esbuild (npm run build:harness) into tests/browser/dist.
import React from 'react';
import { createRoot, Root } from 'react-dom/client';
import {
  CoreApp,
  DataFrame,
  DataFrameJSON,
  dataFrameFromJSON,
  DataQueryRequest,
  EventBusSrv,
  LoadingState,
  PanelData,
  PanelProps,
  createTheme,
  dateTime,
} from '@grafana/data';
import { ThemeContext } from '@grafana/ui';
import { BackendSrv, BackendSrvRequest, FetchResponse, setBackendSrv, toDataQueryResponse } from '@grafana/runtime';
import { Observable, lastValueFrom } from 'rxjs';
import { ReplayPanel } from '../../src/panel/ReplayPanel';
import { DEFAULT_OPTIONS, ReplayOptions } from '../../src/panel/types';
import { ReplayDataSourceOptions, ReplayQuery, runRequest } from '../../src/datasource/types';
import { ViewerTool } from '../../src/viewer/ViewerTool';
import { pageURL, withRun } from '../../src/viewer/tool';
import { followLive } from '../../src/viewer/liveStream';

interface ViewerConfig {
  datasource: { uid: string; type: string };
  query: Record<string, unknown> | null;
  traceIds: string[];
  /** The settings the query form reads (pkg/viewer pageSettings). */
  settings?: ReplayDataSourceOptions;
  /** The viewer's request bound (a bundle file larger than this is not sent). */
  maxUploadBytes?: number;
  /** The viewer's per-run token: every API call sends it in X-QueryReplay-Token (docs/security.md). */
  token: string;
}

interface HarnessState {
  state: 'loading' | 'ready' | 'error';
  error?: string;
  /** performance.now() when the converted frames were handed to the panel. */
  framesAt?: number;
  /** Bytes of the /api/ds/query answer and ms to fetch + convert it. */
  responseBytes?: number;
  fetchMs?: number;
  convertMs?: number;
  rows?: number;
  /** The query the panel shows (what the page's URL now names). */
  query?: Record<string, unknown>;
  /** Live frames the page received, and how its stream ended. */
  liveFrames?: number;
  liveEnd?: { error?: string; cancelled?: boolean };
  render: (patch: Partial<View>) => void;
}

interface View {
  theme: 'dark' | 'light';
  width: number;
  height: number;
  options: ReplayOptions;
  title: string;
}

declare global {
  interface Window {
    __QUERYREPLAY_VIEWER__: ViewerConfig;
    __harness: HarnessState;
    __QUERYREPLAY_DEBUG__?: { panels: unknown[] };
  }
}

window.__QUERYREPLAY_DEBUG__ = { panels: [] };
// Grafana serves @grafana/ui's icons from its public path; the build copies them under /assets/build/img/icons
(window as unknown as { __grafana_public_path__: string }).__grafana_public_path__ = '/assets/';

/** The part of Grafana's BackendSrv the panel uses: fetch, over window.fetch, with Grafana's error shape. */
let lastBytes = 0;
const backendSrv = {
  fetch<T>(options: BackendSrvRequest): Observable<FetchResponse<T>> {
    return new Observable<FetchResponse<T>>((sub) => {
      const ctl = new AbortController();
      fetch(options.url, {
        method: options.method ?? 'GET',
        // the viewer refuses API calls without its token (pkg/viewer/guard.go)
        headers: { 'Content-Type': 'application/json', 'X-QueryReplay-Token': window.__QUERYREPLAY_VIEWER__.token },
        body: options.data === undefined ? undefined : JSON.stringify(options.data),
        signal: ctl.signal,
      })
        .then(async (res) => {
          const text = await res.text();
          lastBytes = text.length;
          const data = text ? JSON.parse(text) : undefined;
          const response = {
            data,
            status: res.status,
            statusText: res.statusText,
            ok: res.ok,
            headers: res.headers,
            url: res.url,
            type: res.type,
            redirected: res.redirected,
            config: options,
          } as unknown as FetchResponse<T>;
          if (!res.ok) {
            sub.error({ status: res.status, statusText: res.statusText, data, config: options });
            return;
          }
          sub.next(response);
          sub.complete();
        })
        .catch((e) => sub.error(e));
      return () => ctl.abort();
    });
  },
} as unknown as BackendSrv;
setBackendSrv(backendSrv);

// Calls made with window.fetch (the bundle upload sends the file as it is,
// which backendSrv would serialise) carry the token too, but only to this
// page's own API.
const nativeFetch = window.fetch.bind(window);
window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input), location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/api/')) {
    return nativeFetch(input, init);
  }
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set('X-QueryReplay-Token', window.__QUERYREPLAY_VIEWER__.token);
  return nativeFetch(input, { ...init, headers });
};

// A download link (the trace list's Download) is a navigation, which
// carries no token: fetch the bundle with it and save the blob instead.
document.addEventListener(
  'click',
  (e) => {
    const a = (e.target as Element | null)?.closest?.('a[download]') as HTMLAnchorElement | null;
    if (!a || new URL(a.href).origin !== location.origin || !new URL(a.href).pathname.startsWith('/api/')) {
      return;
    }
    e.preventDefault();
    void fetch(a.href).then(async (res) => {
      if (!res.ok) {
        return;
      }
      const blob = URL.createObjectURL(await res.blob());
      const save = document.createElement('a');
      save.href = blob;
      save.download = a.href.split('/').slice(-2, -1)[0] + '.json.gz';
      save.click();
      setTimeout(() => URL.revokeObjectURL(blob), 10_000);
    });
  },
  true
);

const cfg = window.__QUERYREPLAY_VIEWER__;
const params = new URLSearchParams(location.search);
// The panel fills the window (less the chrome around it) unless the URL
// fixes a size (?width=&height=); it follows the window when it is resized.
const fixedW = Number(params.get('width')) || 0;
const fixedH = Number(params.get('height')) || 0;
const CHROME_W = 2 * 8 + 2 + 16;
const CHROME_H = 2 * 8 + 2 + 32 + 8;
function fill(): { width: number; height: number } {
  return {
    width: fixedW || Math.max(320, window.innerWidth - CHROME_W),
    height: fixedH || Math.max(240, window.innerHeight - CHROME_H),
  };
}
const view: View = {
  theme: params.get('theme') === 'light' ? 'light' : 'dark',
  ...fill(),
  options: { ...DEFAULT_OPTIONS, ...(params.get('options') ? JSON.parse(params.get('options')!) : {}) },
  title: params.get('title') ?? 'Query replay',
};
const maxDataPoints = Number(params.get('maxDataPoints') ?? 0) || undefined;

let root: Root | null = null;
let data: PanelData | null = null;

function panelProps(d: PanelData): PanelProps<ReplayOptions> {
  const timeRange = d.timeRange;
  return {
    id: 1,
    data: d,
    timeRange,
    timeZone: 'utc',
    options: view.options,
    width: view.width,
    height: view.height,
    transparent: false,
    fieldConfig: { defaults: {}, overrides: [] },
    renderCounter: 0,
    title: view.title,
    eventBus: new EventBusSrv(),
    onOptionsChange: () => undefined,
    onFieldConfigChange: () => undefined,
    replaceVariables: (s: string) => s,
    onChangeTimeRange: () => undefined,
  } as unknown as PanelProps<ReplayOptions>;
}

function render() {
  const theme = createTheme({ colors: { mode: view.theme } });
  document.body.style.margin = '0';
  document.body.style.background = theme.colors.background.canvas;
  document.body.style.color = theme.colors.text.primary;
  document.body.style.fontFamily = theme.typography.fontFamily;
  // Grafana's global styles set the root and body type; without them the tools' labels ("Event cap",
  // "No read-ahead") were set at the browser's 16 px and wrapped out of their boxes
  document.documentElement.style.fontSize = `${theme.typography.htmlFontSize}px`;
  document.body.style.fontSize = String(theme.typography.body.fontSize);
  document.body.style.lineHeight = String(theme.typography.body.lineHeight);
  const chrome: React.CSSProperties = {
    display: 'block',
    width: 'fit-content',
    margin: 8,
    background: theme.colors.background.primary,
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
  };
  const title: React.CSSProperties = {
    height: 32,
    lineHeight: '32px',
    padding: '0 8px',
    fontSize: 14,
    fontWeight: 500,
    flex: '1 1 auto',
    minWidth: 0,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    whiteSpace: 'nowrap',
  };
  const titleRow: React.CSSProperties = { display: 'flex', alignItems: 'center', position: 'relative', gap: 8 };
  root ??= createRoot(document.getElementById('root')!);
  root.render(
    <ThemeContext.Provider value={theme}>
      <div style={chrome} data-testid="harness-panel">
        {/* the viewer's tools share the title row, so the panel keeps the whole window below it */}
        <div style={titleRow}>
          <div style={title} title={view.title} data-testid="harness-title">
            {view.title}
          </div>
          <ViewerTool
            uid={cfg.datasource.uid}
            settings={cfg.settings ?? {}}
            maxUploadBytes={cfg.maxUploadBytes ?? 0}
            current={window.__harness?.query ?? {}}
            onShow={(q, t) => void show(q, t)}
          />
        </div>
        <div style={{ padding: '0 8px 8px 8px' }}>{data && <ReplayPanel {...panelProps(data)} />}</div>
      </div>
    </ThemeContext.Provider>
  );
}

/**
 * Shows a query in the panel: the page's URL names it first (with its run
 * request), so a reload asks again with the same request and the backend
 * serves the trace it made instead of running the batch again
 * (pkg/plugin/runonce.go).
 */
async function show(q: ReplayQuery | Record<string, unknown>, title: string) {
  const query = { ...q } as Record<string, unknown>;
  delete query.refId;
  history.replaceState(null, '', pageURL(location.href, query, title));
  view.title = title;
  await load(query);
}

async function load(query: Record<string, unknown>) {
  const state = window.__harness;
  state.state = 'loading';
  state.error = undefined;
  state.query = query;
  render();
  const now = Date.now();
  const request = {
    targets: [{ refId: 'A', datasource: cfg.datasource, ...query }],
    range: { from: dateTime(now - 3600_000), to: dateTime(now), raw: { from: 'now-1h', to: 'now' } },
    app: CoreApp.Dashboard,
  } as unknown as DataQueryRequest;
  const t0 = performance.now();
  try {
    const res = await lastValueFrom(
      backendSrv.fetch({
        url: '/api/ds/query',
        method: 'POST',
        data: {
          from: String(now - 3600_000),
          to: String(now),
          queries: [
            {
              refId: 'A',
              datasource: cfg.datasource,
              maxDataPoints: maxDataPoints ?? Math.round(view.width),
              ...query,
            },
          ],
        },
      })
    ).catch((e) => e);
    const t1 = performance.now();
    const parsed = toDataQueryResponse(res as Parameters<typeof toDataQueryResponse>[0], request.targets);
    const t2 = performance.now();
    const series = parsed.data as DataFrame[];
    data = {
      series,
      state: parsed.errors?.length ? LoadingState.Error : LoadingState.Done,
      errors: parsed.errors,
      timeRange: request.range,
      request,
    };
    Object.assign(state, {
      responseBytes: lastBytes,
      fetchMs: t1 - t0,
      convertMs: t2 - t1,
      rows: series.reduce((n, f) => n + f.length, 0),
      framesAt: performance.now(),
    });
    render();
    state.state = parsed.errors?.length ? 'error' : 'ready';
    state.error = parsed.errors?.map((e) => e.message).join('; ');
    const channel = series.find((f) => f.meta?.channel)?.meta?.channel;
    if (channel) {
      void stream(channel, request);
    }
  } catch (e) {
    state.state = 'error';
    state.error = e instanceof Error ? e.message : String(e);
  }
}

let live: AbortController | null = null;

/**
 * A live trace: the viewer's event stream stands for Grafana Live, each
 * frame replacing the panel's data (the panel switches to the finished
 * replay itself when the last frame names the stored trace).
 */
async function stream(channel: string, request: DataQueryRequest) {
  live?.abort();
  const ctl = new AbortController();
  live = ctl;
  const state = window.__harness;
  state.liveFrames = 0;
  try {
    const end = await followLive(
      channel,
      (f) => {
        data = {
          series: [dataFrameFromJSON(f as DataFrameJSON)],
          state: LoadingState.Streaming,
          timeRange: request.range,
          request,
        };
        state.liveFrames = (state.liveFrames ?? 0) + 1;
        render();
      },
      ctl.signal
    );
    state.liveEnd = end;
  } catch (e) {
    if (!ctl.signal.aborted) {
      state.liveEnd = { error: e instanceof Error ? e.message : String(e) };
    }
  }
}

async function main() {
  window.__harness = { state: 'loading', render: (patch) => (Object.assign(view, patch), render()) };
  // Opening the page with a trace query is the explicit ask to run it: the
  // backend runs a trace only for a fresh run request (docs/frames.md §1).
  // show() writes the request into the URL, so a reload never runs it again.
  const query = withRun(cfg.query ?? {}, runRequest);
  if (query !== cfg.query && Object.keys(query).length > 0) {
    await show(query, view.title);
    return;
  }
  await load(query);
}

window.addEventListener('resize', () => {
  if (!fixedW || !fixedH) {
    Object.assign(view, fill());
    render();
  }
});

void main();
