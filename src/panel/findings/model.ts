import { DataFrame, Field } from '@grafana/data';
import { EventLaneName, isEventLane } from '../model/lanes';
import { formatDuration } from '../replay/scale';

/**
 * The `findings` frame (docs/frames.md §3.10) read into typed findings: what
 * the trace means in a DBA's words, with the operators, the evidence events
 * (ids into the lanes), the measured numbers and the hint. The JSON columns
 * arrive as objects (Grafana decodes `other` fields) or, from older
 * converters, as strings; both are read.
 */

export type Severity = 'critical' | 'warning' | 'info';
export type Confidence = 'high' | 'medium' | 'low';

export interface FindingOperator {
  nodeId: number;
  name: string;
  object: string;
}

/** One evidence event: the entry `index` of lane `lane` in the whole trace (`id` = "<lane>/<index>"). */
export interface EvidenceRef {
  id: string;
  lane: EventLaneName;
  index: number;
  /** Its start and end, µs from time zero (equal for point events). */
  t: number;
  end: number;
  nodeId: number | null;
}

export interface FindingNumber {
  name: string;
  value: number;
  /** pages, rows, KB, bytes, us, percent, count or ratio. */
  unit: string;
  /** events, plan or run. */
  source: string;
}

export interface Finding {
  rule: string;
  severity: Severity;
  confidence: Confidence;
  title: string;
  detail: string;
  hint: string;
  reference: string;
  /** The evidence's span; null when the finding has none in time. */
  span: { startUs: number; endUs: number } | null;
  primaryNodeId: number | null;
  operators: FindingOperator[];
  evidence: EvidenceRef[];
  /** All evidence entries, including those the frame left out (at most 200 are listed). */
  evidenceTotal: number;
  numbers: FindingNumber[];
  confidenceReasons: string[];
}

export interface FindingsReport {
  findings: Finding[];
  counts: Record<Severity, number>;
  /** What the analysis could not look at (no plan, an event group not traced). */
  notes: string[];
}

const SEVERITIES: Severity[] = ['critical', 'warning', 'info'];

function json(v: unknown): unknown {
  if (typeof v !== 'string') {
    return v;
  }
  try {
    return JSON.parse(v);
  } catch {
    return null;
  }
}

function list(v: unknown): Array<Record<string, unknown>> {
  const j = json(v);
  return Array.isArray(j) ? (j.filter((x) => x && typeof x === 'object') as Array<Record<string, unknown>>) : [];
}

function numOrNull(v: unknown): number | null {
  return v === null || v === undefined || v === '' || Number.isNaN(Number(v)) ? null : Number(v);
}

function readEvidence(v: unknown): EvidenceRef[] {
  const out: EvidenceRef[] = [];
  for (const e of list(v)) {
    const lane = String(e.lane ?? '');
    const index = numOrNull(e.index);
    const t = numOrNull(e.t);
    if (!isEventLane(lane) || index === null || t === null) {
      continue;
    }
    out.push({
      id: String(e.id ?? `${lane}/${index}`),
      lane,
      index,
      t,
      end: Math.max(t, numOrNull(e.end) ?? t),
      nodeId: numOrNull(e.nodeId),
    });
  }
  return out.sort((a, b) => a.t - b.t);
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(v as T) ? (v as T) : fallback;
}

/** Reads the findings frame, or null when the frames carry none. */
export function findingsFromFrames(frames: DataFrame[]): FindingsReport | null {
  const frame = frames.find((f) => f.name === 'findings');
  if (!frame) {
    return null;
  }
  const col = (name: string): Field | undefined => frame.fields.find((f) => f.name === name);
  const at = (name: string, r: number): unknown => col(name)?.values[r];
  const str = (name: string, r: number): string => {
    const v = at(name, r);
    return v === null || v === undefined ? '' : String(v);
  };
  const findings: Finding[] = [];
  for (let r = 0; r < frame.length; r++) {
    const evidence = readEvidence(at('evidence', r));
    const hasTime = at('start', r) !== null && at('start', r) !== undefined;
    const startUs = numOrNull(at('startUs', r));
    const endUs = numOrNull(at('endUs', r));
    findings.push({
      rule: str('rule', r),
      severity: oneOf(at('severity', r), SEVERITIES, 'info'),
      confidence: oneOf(at('confidence', r), ['high', 'medium', 'low'] as const, 'high'),
      title: str('title', r),
      detail: str('detail', r),
      hint: str('hint', r),
      reference: str('reference', r),
      span:
        (hasTime || evidence.length > 0) && startUs !== null
          ? { startUs, endUs: Math.max(startUs, endUs ?? startUs) }
          : null,
      primaryNodeId: numOrNull(at('primaryNodeId', r)),
      operators: list(at('operators', r)).map((o) => ({
        nodeId: Number(o.nodeId),
        name: String(o.name ?? ''),
        object: String(o.object ?? ''),
      })),
      evidence,
      evidenceTotal: numOrNull(at('evidenceTotal', r)) ?? evidence.length,
      numbers: list(at('numbers', r)).map((n) => ({
        name: String(n.name ?? ''),
        value: Number(n.value),
        unit: String(n.unit ?? ''),
        source: String(n.source ?? ''),
      })),
      confidenceReasons: (() => {
        const j = json(at('confidenceReasons', r));
        return Array.isArray(j) ? j.map(String) : [];
      })(),
    });
  }
  const custom = (frame.meta?.custom ?? {}) as { counts?: Partial<Record<Severity, number>>; notes?: unknown };
  const counts = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) {
    counts[f.severity]++;
  }
  return {
    findings,
    counts: { ...counts, ...(custom.counts ?? {}) },
    notes: Array.isArray(custom.notes) ? custom.notes.map(String) : [],
  };
}

/** The operators a finding selects: its listed operators, else the primary one. */
export function findingNodes(f: Finding): number[] {
  const ids = f.operators.map((o) => o.nodeId).filter((n) => Number.isFinite(n));
  if (ids.length === 0 && f.primaryNodeId !== null) {
    ids.push(f.primaryNodeId);
  }
  return [...new Set(ids)];
}

/** "grantedKB" → "granted", "pageIOLatchUs" → "page IO latch", "readAheadIOs" → "read ahead IOs". */
export function numberLabel(name: string): string {
  const base = name.replace(/(Us|KB|Bytes|Pct)$/, '') || name;
  const words = base.match(/[A-Z]{2,}s?(?=[A-Z]|$)|[A-Z]?[a-z0-9]+|[A-Z]+/g) ?? [base];
  return words.map((w) => (/^[A-Z]{2,}s?$/.test(w) ? w : w.toLowerCase())).join(' ');
}

function fmt(v: number, digits = 0): string {
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** A measured number in its unit: "12,400 pages", "85%", "1.2 ms", "1,024 KB". */
export function formatNumber(n: FindingNumber): string {
  switch (n.unit) {
    case 'pages':
    case 'rows':
      return `${fmt(n.value)} ${n.value === 1 ? n.unit.slice(0, -1) : n.unit}`;
    case 'percent':
      return `${fmt(n.value, n.value < 10 ? 1 : 0)}%`;
    case 'us':
      return formatDuration(n.value);
    case 'KB':
      return n.value >= 10 * 1024 ? `${fmt(n.value / 1024, 1)} MB` : `${fmt(n.value)} KB`;
    case 'bytes':
      return n.value >= 1024 ? `${fmt(n.value / 1024, 1)} KiB` : `${fmt(n.value)} B`;
    case 'ratio':
      return `${fmt(n.value, 1)}×`;
    default:
      return fmt(n.value, 2);
  }
}

/** A number's label and value, without saying the unit twice ("tempdb pages written 36", not "… 36 pages"). */
export function numberText(n: FindingNumber): { label: string; value: string } {
  const label = numberLabel(n.name);
  const said =
    (n.unit === 'pages' || n.unit === 'rows') && label.split(' ').some((w) => n.unit.startsWith(w.replace(/s$/, '')));
  return { label, value: said ? fmt(n.value) : formatNumber(n) };
}

export const SEVERITY_LABEL: Record<Severity, string> = {
  critical: 'Critical',
  warning: 'Warning',
  info: 'Info',
};

/** "[dbo].[Orders].[PK_Orders]" → "dbo.Orders.PK_Orders". */
export function plainObject(name: string): string {
  return name.replace(/\[([^\]]*)\]/g, '$1');
}

/** "Key Lookup (dbo.Orders.PK_Orders)", or the name alone. */
export function operatorLabel(o: FindingOperator): string {
  return o.object ? `${o.name} (${plainObject(o.object)})` : o.name;
}
