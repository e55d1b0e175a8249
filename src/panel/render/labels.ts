import { Operator } from '../model/trace';

/**
 * Operator labels that fit the timeline's label column without hiding what
 * tells two operators apart. A DBA tells `Clustered Index Scan` on Customers
 * from the one on Orders by the table, so when the full text does not fit the
 * operator's name is abbreviated (the way Plan Explorer and DBAs write them)
 * before the table is cut; the tooltip always carries the full text.
 */

/** The parts of a plan object (`dbo.Orders.PK_Orders`, `[dbo].[Orders].[PK_Orders]`), brackets removed. */
export function objectParts(object: string): { schema: string; table: string; index: string } {
  const parts: string[] = [];
  let cur = '';
  let inBracket = false;
  for (const ch of object.trim()) {
    if (inBracket) {
      if (ch === ']') {
        inBracket = false;
      } else {
        cur += ch;
      }
    } else if (ch === '[') {
      inBracket = true;
    } else if (ch === '.') {
      parts.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  parts.push(cur);
  const p = parts.filter((s) => s !== '');
  // showplan objects carry a schema; a bare name is a table (a heap, a temp table)
  if (p.length <= 1) {
    return { schema: '', table: p[0] ?? '', index: '' };
  }
  return { schema: p[0], table: p[1], index: p.slice(2).join('.') };
}

const ABBREVIATIONS: Array<[RegExp, string]> = [
  [/^Clustered Index /, 'CI '],
  [/^Nonclustered Index /, 'NCI '],
  [/^Index /, 'Ix '],
  [/^Table /, 'Tbl '],
  [/^Columnstore Index /, 'CS '],
  [/^Nested Loops$/, 'Nested Loops'],
  [/^Stream Aggregate$/, 'Stream Agg'],
  [/^Hash Match$/, 'Hash Match'],
  [/^Compute Scalar$/, 'Compute'],
  [/^Parallelism$/, 'Parallelism'],
  [/ Spool$/, ' Spool'],
];

/** The operator name as DBAs shorten it: `Clustered Index Seek` → `CI Seek`, `Stream Aggregate` → `Stream Agg`. */
export function abbreviate(name: string): string {
  for (const [re, s] of ABBREVIATIONS) {
    if (re.test(name)) {
      return name.replace(re, s);
    }
  }
  return name;
}

/** The candidate labels, most complete first: each later one drops less of what tells operators apart. */
export function labelCandidates(op: Pick<Operator, 'nodeId' | 'name' | 'object'>): string[] {
  const { table, index } = objectParts(op.object ?? '');
  const id = String(op.nodeId);
  const short = abbreviate(op.name);
  if (!table) {
    return unique([`${id} ${op.name}`, `${id} ${short}`]);
  }
  return unique([
    `${id} ${op.name} · ${table}${index ? '.' + index : ''}`,
    `${id} ${op.name} · ${table}`,
    `${id} ${short} · ${table}`,
    `${id} ${table}`,
  ]);
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/**
 * The first candidate that fits maxW (measured by measure), else the
 * shortest one clipped with an ellipsis: clipped text is the last resort.
 */
export function fitLabel(candidates: string[], maxW: number, measure: (s: string) => number): string {
  for (const c of candidates) {
    if (measure(c) <= maxW) {
      return c;
    }
  }
  return clip(candidates[candidates.length - 1] ?? '', maxW, measure);
}

export function clip(text: string, maxW: number, measure: (s: string) => number): string {
  if (measure(text) <= maxW) {
    return text;
  }
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(text.slice(0, mid) + '…') <= maxW) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo > 0 ? text.slice(0, lo) + '…' : '';
}

/** The label column's width: wider on wide panels so operator and table names are read, not guessed. */
export function labelColumnWidth(width: number): number {
  if (width < 560) {
    return 58;
  }
  return Math.round(Math.min(260, Math.max(112, width * 0.16)));
}
