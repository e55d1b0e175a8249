/**
 * The local viewer page's pure rules (pkg/viewer serves the page; the
 * harness mounts it): how a query becomes the page's URL so that a reload
 * re-sends the same run request (pkg/plugin/runonce.go: served from the
 * stored trace, never run again), when a trace query gets a run request,
 * how a bundle file is bounded, and the title of what is shown.
 */

type Query = Record<string, unknown>;

/**
 * The query the page opens with, with a run request when it is a trace
 * query without one: opening a `?sql=` link is the ask to run it. The
 * caller then writes it into the URL (pageURL), so a reload asks with the
 * same request.
 */
export function withRun(q: Query, makeRun: () => string): Query {
  const type = q.queryType ?? 'trace';
  return type === 'trace' && typeof q.sql === 'string' && q.sql.trim() !== '' && !q.run ? { ...q, run: makeRun() } : q;
}

/**
 * The page's URL for a query: ?query=<JSON> (pkg/viewer pageQuery reads
 * it) with the title; the parameters that only shape the page (theme,
 * width, height, options, maxDataPoints) are kept, the ones that named
 * another query (traceId, sql, database) dropped.
 */
export function pageURL(current: string, q: Query, title: string): string {
  const u = new URL(current);
  for (const k of ['traceId', 'sql', 'database', 'query', 'title']) {
    u.searchParams.delete(k);
  }
  const { refId: _refId, datasource: _ds, ...rest } = q;
  u.searchParams.set('query', JSON.stringify(rest));
  if (title) {
    u.searchParams.set('title', title);
  }
  return u.toString();
}

/** Why a bundle file is not sent (over the viewer's request bound), or null. */
export function fileTooLarge(size: number, limit: number): string | null {
  if (!(limit > 0) || size <= limit) {
    return null;
  }
  const mb = (n: number) => `${(n / (1 << 20)).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;
  return `${mb(size)} exceeds the viewer's limit of ${mb(limit)} (queryreplay view --max-bundle-mb)`;
}

/** A panel title from a statement: one line, at most 80 characters. */
export function queryTitle(sql: string): string {
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || 'Query replay';
}
