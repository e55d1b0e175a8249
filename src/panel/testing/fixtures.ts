import fs from 'fs';
import path from 'path';
import { DataFrame, DataFrameJSON, FieldType, dataFrameFromJSON, toDataFrame } from '@grafana/data';
import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, laneFromFrame, traceFromFrames } from '../model/trace';

/** Frames written by the Go side (go test ./pkg/frames -update), decoded as Grafana decodes them. */
export function goldenFrames(
  name:
    | 'trace_response'
    | 'view_binned'
    | 'findings'
    | 'compare_response'
    | 'statement_response'
    | 'compare_statements_response'
): DataFrame[] {
  const file = path.join(__dirname, '..', '..', '..', 'testdata', 'frames', `${name}.json`);
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as DataFrameJSON[];
  return raw.map((f) => dataFrameFromJSON(f));
}

export function goldenTrace(): ReplayTrace {
  const r = traceFromFrames(goldenFrames('trace_response'));
  if (!r.trace) {
    throw new Error(r.error);
  }
  return r.trace;
}

export interface Row {
  s: number;
  e?: number;
  node?: number | null;
  state?: string;
  count?: number;
  /** The entry's position in the whole lane (the frames' hidden `index` field). */
  index?: number;
}

/** A lane frame in the docs/frames.md shape from a few rows. */
export function laneFrame(name: EventLaneName, rows: Row[], meta: Record<string, unknown> = {}): DataFrame {
  const binned = rows.some((r) => r.count !== undefined);
  const fields = [
    { name: 'start', type: FieldType.time, values: rows.map((r) => r.s / 1000) },
    { name: 'end', type: FieldType.time, values: rows.map((r) => (r.e ?? r.s) / 1000) },
    { name: 'state', type: FieldType.string, values: rows.map((r) => r.state ?? 'x') },
    { name: 'nodeId', type: FieldType.number, values: rows.map((r) => (r.node === undefined ? 1 : r.node)) },
    { name: 'startUs', type: FieldType.number, values: rows.map((r) => r.s), config: { unit: 'µs' } },
    { name: 'endUs', type: FieldType.number, values: rows.map((r) => r.e ?? r.s), config: { unit: 'µs' } },
    ...(binned
      ? [{ name: 'count', type: FieldType.number, values: rows.map((r) => r.count ?? 1) }]
      : [
          { name: 'rule', type: FieldType.string, values: rows.map(() => 'object') },
          { name: 'confidence', type: FieldType.string, values: rows.map(() => 'strong') },
        ]),
    ...(rows.some((r) => r.index !== undefined)
      ? [{ name: 'index', type: FieldType.number, values: rows.map((r) => r.index ?? null) }]
      : []),
  ];
  return toDataFrame({ name: `lane_${name}`, fields, meta: { custom: { lane: name, traced: true, binned, ...meta } } });
}

export function lane(name: EventLaneName, rows: Row[], meta: Record<string, unknown> = {}): LaneData {
  return laneFromFrame(name, laneFrame(name, rows, meta), { fromUs: 0, toUs: 1000 });
}

/** An `escalations` frame in the docs/frames.md shape (pkg/frames escalationsFrame). */
export function escalationsFrame(rows: Array<{ t: number; mode?: string; object?: string; locks?: number }>) {
  return toDataFrame({
    name: 'escalations',
    fields: [
      { name: 'time', type: FieldType.time, values: rows.map((r) => r.t / 1000) },
      { name: 'tUs', type: FieldType.number, values: rows.map((r) => r.t), config: { unit: 'µs' } },
      { name: 'mode', type: FieldType.string, values: rows.map((r) => r.mode ?? 'X') },
      { name: 'resourceType', type: FieldType.string, values: rows.map(() => 'OBJECT') },
      { name: 'object', type: FieldType.string, values: rows.map((r) => r.object ?? '[dbo].[Orders]') },
      { name: 'escalatedLockCount', type: FieldType.number, values: rows.map((r) => r.locks ?? 5000) },
      { name: 'hobtLockCount', type: FieldType.number, values: rows.map(() => 0) },
      { name: 'cause', type: FieldType.string, values: rows.map(() => 'Lock threshold') },
    ],
    meta: { custom: { source: 'lock_escalation' } },
  });
}
