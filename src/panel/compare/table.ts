import { formatDuration } from '../replay/scale';
import { Metric, MetricPair, PairRow } from './model';
import { plainObject } from '../findings/model';

/**
 * The comparison table's columns and cells: which metrics a column shows
 * (only columns some operator has a non-zero figure in are shown), a pair
 * of values as "61 → 2", and whether a significant change went the right
 * way (fewer reads, less waiting) or the wrong way.
 */

export type Unit = 'pages' | 'rows' | 'us' | 'count';

export interface Column {
  key: string;
  label: string;
  /** Summed into one figure per side, unless `breakdown` lists them one per line. */
  metrics: Metric[];
  unit: Unit;
  /** Fewer is better (true), more is better (false), or neither (null: rows). */
  lowerBetter: boolean | null;
  breakdown?: boolean;
  /** Names of the metrics in a breakdown or tooltip. */
  names?: Partial<Record<Metric, string>>;
}

export const COLUMNS: Column[] = [
  { key: 'reads', label: 'reads', metrics: ['reads'], unit: 'pages', lowerBetter: true },
  { key: 'rows', label: 'rows', metrics: ['rows'], unit: 'rows', lowerBetter: null },
  { key: 'time', label: 'time', metrics: ['durationUs'], unit: 'us', lowerBetter: true },
  {
    key: 'waits',
    label: 'waits',
    // the categories of the shared wait table (pkg/timeline/waitclasses.tsv),
    // as the compare and probe frames carry them
    metrics: ['waitIoUs', 'waitCpuUs', 'waitConcurrencyUs', 'waitParallelismUs', 'waitOtherUs'],
    unit: 'us',
    lowerBetter: true,
    names: {
      waitIoUs: 'I/O',
      waitCpuUs: 'CPU',
      waitConcurrencyUs: 'concurrency',
      waitParallelismUs: 'parallelism',
      waitOtherUs: 'other',
    },
  },
  { key: 'spills', label: 'spills', metrics: ['spills'], unit: 'count', lowerBetter: true },
  { key: 'tempdb', label: 'tempdb writes', metrics: ['tempdbWrites'], unit: 'pages', lowerBetter: true },
  {
    key: 'phases',
    label: 'phases',
    metrics: ['phaseConsumeUs', 'phaseBuildUs', 'phaseProbeUs', 'phaseEmitUs', 'phaseReexecutedUs'],
    unit: 'us',
    lowerBetter: true,
    breakdown: true,
    names: {
      phaseConsumeUs: 'consume',
      phaseBuildUs: 'build',
      phaseProbeUs: 'probe',
      phaseEmitUs: 'emit',
      phaseReexecutedUs: 're-executed',
    },
  },
  { key: 'locks', label: 'locks', metrics: ['locks'], unit: 'count', lowerBetter: true },
  { key: 'executions', label: 'executions', metrics: ['executions'], unit: 'count', lowerBetter: null },
  { key: 'splits', label: 'splits', metrics: ['splits'], unit: 'count', lowerBetter: true },
  { key: 'log', label: 'log records', metrics: ['logRecords'], unit: 'count', lowerBetter: true },
];

/** The columns some row has a non-zero figure in, in COLUMNS order. */
export function visibleColumns(rows: PairRow[]): Column[] {
  return COLUMNS.filter((c) =>
    rows.some((r) => c.metrics.some((m) => (r.metrics[m].a ?? 0) !== 0 || (r.metrics[m].b ?? 0) !== 0))
  );
}

/** Width of the operator and status columns, and of one figure column, for fitting columns to a width. */
const FIXED_PX = 260;
const COLUMN_PX = 88;

/**
 * The columns to show in a table `widthPx` wide: those where some operator
 * changed significantly first, then the others, as many as fit.
 */
export function columnsFor(rows: PairRow[], widthPx: number): Column[] {
  const vis = visibleColumns(rows);
  const changed = vis.filter((c) => rows.some((r) => c.metrics.some((m) => r.metrics[m].changed)));
  const rest = vis.filter((c) => !changed.includes(c));
  return [...changed, ...rest].slice(0, Math.max(0, Math.floor((widthPx - FIXED_PX) / COLUMN_PX)));
}

/** A column's figures for a row: the sum of its metrics per side (null where a side has none). */
export function cellPair(row: PairRow, c: Column): MetricPair {
  const sum = (side: 'a' | 'b') => {
    let v: number | null = null;
    for (const m of c.metrics) {
      const x = row.metrics[m][side];
      if (x !== null) {
        v = (v ?? 0) + x;
      }
    }
    return v;
  };
  return { a: sum('a'), b: sum('b'), changed: c.metrics.some((m) => row.metrics[m].changed) };
}

export function formatValue(v: number | null, unit: Unit): string {
  if (v === null) {
    return '–';
  }
  return unit === 'us' ? formatDuration(v) : v.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

/** "61 → 2"; one figure when both sides agree; "– → 26" for an operator only in B. */
export function formatPair(p: MetricPair, unit: Unit): string {
  if (p.a === null && p.b === null) {
    return '';
  }
  if (p.a !== null && p.b !== null && formatValue(p.a, unit) === formatValue(p.b, unit)) {
    return formatValue(p.a, unit);
  }
  return `${formatValue(p.a, unit)} → ${formatValue(p.b, unit)}`;
}

/** Whether a significant change is an improvement, a regression, or neither. */
export function direction(p: MetricPair, c: Column): 'better' | 'worse' | null {
  if (!p.changed || p.a === null || p.b === null || c.lowerBetter === null || p.a === p.b) {
    return null;
  }
  return p.b < p.a === c.lowerBetter ? 'better' : 'worse';
}

/** The lines of a breakdown column (phases): one per metric either side has. */
export function breakdown(row: PairRow, c: Column): Array<{ name: string; text: string; pair: MetricPair }> {
  return c.metrics
    .filter((m) => row.metrics[m].a !== null || row.metrics[m].b !== null)
    .map((m) => ({ name: c.names?.[m] ?? m, text: formatPair(row.metrics[m], c.unit), pair: row.metrics[m] }));
}

/** The operator of a row as a DBA reads it: "Clustered Index Scan → Index Seek", with its object. */
export function pairName(row: PairRow): { name: string; object: string; nodes: string } {
  const nodes = `${row.nodeA ?? '–'} → ${row.nodeB ?? '–'}`;
  const objA = plainObject(row.objectA);
  const objB = plainObject(row.objectB);
  switch (row.status) {
    case 'added':
      return { name: row.nameB, object: objB, nodes };
    case 'removed':
      return { name: row.nameA, object: objA, nodes };
    case 'replaced':
      return {
        name: `${row.nameA} → ${row.nameB}`,
        object: objA === objB ? objA : [objA, objB].filter(Boolean).join(' → '),
        nodes,
      };
    default:
      return { name: row.nameA, object: objA, nodes };
  }
}
