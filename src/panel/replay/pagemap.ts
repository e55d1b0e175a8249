import { LaneData, Pages } from '../model/trace';
import { upperBound } from './search';

/**
 * The page map's geometry and timing, without a canvas. Allocations view:
 * the pages of each touched object in page-id order. Index view: each
 * object's B-tree levels from the root down to the leaves, which needs the
 * page-header facts of docs/frames.md §3.6 (`indexLevel`).
 */

export type PageMapMode = 'allocations' | 'index';

export interface PageGroup {
  title: string;
  /** Header text position; cells follow below it. */
  y: number;
  rows: number;
}

export interface PageLayout {
  cell: number;
  gap: number;
  /** Position of page i (index into Pages), -1 when it did not fit. */
  x: Float32Array;
  y: Float32Array;
  headers: Array<{ text: string; y: number }>;
  shown: number;
  hidden: number;
  /** Why nothing can be drawn in this mode, if so. */
  unavailable: string | null;
}

const HEADER_H = 14;

interface Group {
  title: string;
  pages: number[];
}

function groupsFor(p: Pages, mode: PageMapMode): Group[] {
  const byObject = new Map<string, number[]>();
  for (let i = 0; i < p.n; i++) {
    const key = p.object[i] || 'unresolved pages';
    let g = byObject.get(key);
    if (!g) {
      g = [];
      byObject.set(key, g);
    }
    g.push(i);
  }
  const order = (a: number, b: number) =>
    p.database[a] - p.database[b] || p.file[a] - p.file[b] || p.page[a] - p.page[b];
  const objects = [...byObject.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  if (mode === 'allocations') {
    return objects.map(([title, pages]) => ({
      title: `${title} · ${pages.length.toLocaleString('en-US')} pages`,
      pages: pages.sort(order),
    }));
  }
  const out: Group[] = [];
  for (const [title, pages] of objects) {
    const levels = new Map<number, number[]>();
    for (const i of pages) {
      const l = p.indexLevel[i];
      if (l === null) {
        continue;
      }
      levels.set(l, [...(levels.get(l) ?? []), i]);
    }
    const sorted = [...levels.entries()].sort((a, b) => b[0] - a[0]);
    sorted.forEach(([level, ps], k) => {
      const name = level === 0 ? 'leaf' : k === 0 ? 'root' : 'intermediate';
      out.push({
        title: `${title} · level ${level} (${name}) · ${ps.length.toLocaleString('en-US')} pages`,
        pages: chainOrder(p, ps.sort(order)),
      });
    });
  }
  return out;
}

/**
 * Orders one B-tree level's pages in key order: along the previous/next
 * links of their headers, starting from each page whose previous page was
 * not touched; pages the links do not reach keep page-id order after them.
 */
export function chainOrder(p: Pages, pages: number[]): number[] {
  const byId = new Map<string, number>();
  for (const i of pages) {
    byId.set(p.pageId[i], i);
  }
  const seen = new Set<number>();
  const out: number[] = [];
  for (const head of pages) {
    const prev = p.prevPage[head];
    if (seen.has(head) || (prev !== null && byId.has(prev))) {
      continue;
    }
    for (let cur: number | undefined = head; cur !== undefined && !seen.has(cur);) {
      seen.add(cur);
      out.push(cur);
      const next: string | null = p.nextPage[cur];
      cur = next === null ? undefined : byId.get(next);
    }
  }
  for (const i of pages) {
    if (!seen.has(i)) {
      out.push(i);
    }
  }
  return out;
}

/**
 * Why the Index view is empty, in a DBA's words: the tracer reads page
 * headers (sys.dm_db_page_info, SQL Server 2019 and later) after the run;
 * older servers give none.
 */
export const INDEX_UNAVAILABLE =
  'No index levels to show: the B-tree level of each page comes from its page header, which the tracer reads with sys.dm_db_page_info after the run (SQL Server 2019 and later). This trace has no page headers; the Allocations view shows every page it touched.';

/** Lays out the pages in width × height, with the largest cell (12 px down to 1 px) that fits them all. */
export function layoutPages(p: Pages, mode: PageMapMode, width: number, height: number): PageLayout {
  const x = new Float32Array(p.n).fill(-1);
  const y = new Float32Array(p.n).fill(-1);
  const empty = (why: string | null): PageLayout => ({
    cell: 0,
    gap: 0,
    x,
    y,
    headers: [],
    shown: 0,
    hidden: p.n,
    unavailable: why,
  });
  if (mode === 'index' && !p.indexLevel.some((l) => l !== null)) {
    return empty(INDEX_UNAVAILABLE);
  }
  const groups = groupsFor(p, mode);
  if (groups.length === 0) {
    return empty(p.n === 0 ? 'No pages were touched in this window.' : null);
  }
  for (const cell of [12, 10, 8, 6, 5, 4, 3, 2, 1]) {
    const gap = cell >= 4 ? 1 : 0;
    const perRow = Math.max(1, Math.floor((width + gap) / (cell + gap)));
    let need = 0;
    for (const g of groups) {
      need += HEADER_H + Math.ceil(g.pages.length / perRow) * (cell + gap) + 4;
    }
    if (need <= height || cell === 1) {
      return place(groups, cell, gap, perRow, height, x, y);
    }
  }
  return empty(null);
}

function place(
  groups: Group[],
  cell: number,
  gap: number,
  perRow: number,
  height: number,
  x: Float32Array,
  y: Float32Array
): PageLayout {
  const headers: PageLayout['headers'] = [];
  let top = 0;
  let shown = 0;
  let hidden = 0;
  for (const g of groups) {
    if (top + HEADER_H + cell > height) {
      hidden += g.pages.length;
      continue;
    }
    headers.push({ text: g.title, y: top });
    top += HEADER_H;
    g.pages.forEach((i, k) => {
      const row = Math.floor(k / perRow);
      const cy = top + row * (cell + gap);
      if (cy + cell > height) {
        hidden++;
        return;
      }
      x[i] = (k % perRow) * (cell + gap);
      y[i] = cy;
      shown++;
    });
    top += Math.ceil(g.pages.length / perRow) * (cell + gap) + 4;
  }
  return { cell, gap, x, y, headers, shown, hidden, unavailable: null };
}

/** Page timing for the map: pages in order of first access, and which page each read/write entry touched. */
export interface PageTiming {
  /** Page indices sorted by firstUs, with their firstUs. */
  byFirst: Int32Array;
  firstSorted: Float64Array;
  /** First write time of each page (Infinity when never written). */
  firstWrite: Float64Array;
  /** For each read-lane entry, the page index it read (-1 unknown). */
  readPage: Int32Array | null;
  readLane: LaneData | null;
}

export function pageTiming(p: Pages, reads: LaneData | undefined, writes: LaneData | undefined): PageTiming {
  const idx = Array.from({ length: p.n }, (_, i) => i).sort((a, b) => p.firstUs[a] - p.firstUs[b]);
  const byFirst = Int32Array.from(idx);
  const firstSorted = Float64Array.from(idx.map((i) => p.firstUs[i]));
  const key = new Map<string, number>();
  for (let i = 0; i < p.n; i++) {
    key.set(`${p.database[i]}:${p.pageId[i]}`, i);
  }
  const lookup = (lane: LaneData, j: number): number => {
    const r = lane.row[j];
    const db = lane.frame.fields.find((f) => f.name === 'database')?.values[r];
    const pid = lane.frame.fields.find((f) => f.name === 'pageId')?.values[r];
    return pid === undefined ? -1 : (key.get(`${db}:${pid}`) ?? -1);
  };
  const firstWrite = new Float64Array(p.n).fill(Infinity);
  if (writes && !writes.binned) {
    for (let j = 0; j < writes.n; j++) {
      const i = lookup(writes, j);
      if (i >= 0) {
        firstWrite[i] = Math.min(firstWrite[i], writes.start[j]);
      }
    }
  }
  let readPage: Int32Array | null = null;
  if (reads && !reads.binned) {
    readPage = new Int32Array(reads.n);
    for (let j = 0; j < reads.n; j++) {
      readPage[j] = lookup(reads, j);
    }
  }
  return { byFirst, firstSorted, firstWrite, readPage, readLane: reads && !reads.binned ? reads : null };
}

/** Pages first touched in (fromUs, toUs]: positions in byFirst [a, b). */
export function firstTouchedBetween(t: PageTiming, fromUs: number, toUs: number): [number, number] {
  return [upperBound(t.firstSorted, fromUs), upperBound(t.firstSorted, toUs)];
}

/** Pages read in (fromUs, toUs] (the ones that light up now), at most `limit`. */
export function readBetween(t: PageTiming, fromUs: number, toUs: number, limit = 4000): number[] {
  if (!t.readLane || !t.readPage) {
    // without raw reads, a page lights up at its first access
    const [a, b] = firstTouchedBetween(t, fromUs, toUs);
    return Array.from(t.byFirst.subarray(Math.max(a, b - limit), b));
  }
  const lane = t.readLane;
  const a = upperBound(lane.start, fromUs);
  const b = upperBound(lane.start, toUs);
  const out: number[] = [];
  for (let j = Math.max(a, b - limit); j < b; j++) {
    if (t.readPage[j] >= 0) {
      out.push(t.readPage[j]);
    }
  }
  return out;
}

/** Pages touched by toUs. */
export function touchedBy(t: PageTiming, us: number): number {
  return upperBound(t.firstSorted, us);
}
