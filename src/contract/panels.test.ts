import fs from 'fs';
import path from 'path';
import {
  DataFrame,
  DataFrameJSON,
  FieldType,
  dataFrameFromJSON,
  outerJoinDataFrames,
  sortDataFrame,
} from '@grafana/data';
import { checkFields } from '@grafana/flamegraph';

// Frames the real backend returned for one traced query of the SQL Server
// stand-in (with call stacks), per output: pkg/plugin TestBuiltInPanelOutputs
// writes the file (-update-panels) and checks it by its own rules. Here
// Grafana's published code reads them: @grafana/flamegraph's checkFields and
// @grafana/data's outerJoinDataFrames, after dataFrameFromJSON as Grafana's
// frontend decodes a response.
const file = path.join(__dirname, '..', '..', 'testdata', 'frames', 'panels.json');
const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, DataFrameJSON[]>;
const panels: Record<string, DataFrame[]> = Object.fromEntries(
  Object.entries(raw).map(([k, v]) => [k, v.map((f) => dataFrameFromJSON(f))])
);

function frame(fs: DataFrame[], name: string): DataFrame {
  const f = fs.find((x) => x.name === name);
  if (!f) {
    throw new Error(`no frame ${name} in ${fs.map((x) => x.name).join(', ')}`);
  }
  return f;
}

function values(f: DataFrame, name: string): number[] {
  const fl = f.fields.find((x) => x.name === name);
  if (!fl) {
    throw new Error(`frame ${f.name} has no field ${name}`);
  }
  return fl.values as number[];
}

describe('Flame Graph panel: series[0] through @grafana/flamegraph checkFields', () => {
  it('draws the flameGraph output: its first frame has label, level, value, self', () => {
    const series = panels.flameGraph;
    expect(series[0].name).toBe('callstacks');
    expect(checkFields(series[0])).toBeUndefined();
    expect(series[0].length).toBeGreaterThan(2);
  });

  it('cannot draw a plain query, whose first frame is the trace (what issue 25 saw)', () => {
    expect(panels.default[0].name).toBe('trace');
    expect(checkFields(panels.default[0])?.missingFields).toEqual(['label', 'level', 'value', 'self']);
  });
});

describe('Node Graph panel: nodes and edges by field name', () => {
  // The Node Graph panel finds its frames by name and its fields by name
  // (Grafana public/app/plugins/panel/nodeGraph/utils.ts): nodes id/title/
  // mainstat, edges id/source/target, every edge between known nodes.
  it('gets nodes and edges whose edges join known nodes', () => {
    const [nodes, edges] = panels.nodeGraph;
    expect([nodes.name, edges.name]).toEqual(['nodes', 'edges']);
    const ids = new Set(values(nodes, 'id') as unknown as string[]);
    expect(ids.size).toBe(nodes.length);
    values(nodes, 'title');
    values(nodes, 'mainstat');
    values(edges, 'id');
    const src = values(edges, 'source') as unknown as string[];
    const dst = values(edges, 'target') as unknown as string[];
    expect(edges.length).toBeGreaterThan(0);
    src.forEach((s, i) => expect([ids.has(s), ids.has(dst[i])]).toEqual([true, true]));
  });
});

/**
 * The State Timeline's rule, restated (the code is Grafana's
 * public/app/core/components/TimelineChart/utils.ts, prepareTimelineFields,
 * AGPL, not copied): in each frame the first time field holding numbers is
 * the start and the second the end; the frame without its end is outer-joined
 * with the end alone on the time values (outerJoinDataFrames, nulls
 * retained), so a state lasts from its start to its end; string, number,
 * boolean and enum fields are the rows. The panel then draws all frames on
 * one x axis joined on their time fields (outerJoinDataFrames). Equal time
 * values are one x.
 */
// @grafana/data's JoinNullMode "retain" (joinDataFrames NULL_RETAIN; its
// package exports only index and unstable, so the constant is written here)
const NULL_RETAIN = 1;

function stateTimeline(series: DataFrame[]): DataFrame {
  const prepared = series.map((f) => {
    const times = f.fields
      .map((fl, i) => ({ fl, i }))
      .filter(({ fl }) => fl.type === FieldType.time && typeof fl.values[0] === 'number')
      .map(({ i }) => i);
    let frame = sortDataFrame(f, times[0]);
    if (times.length > 1) {
      const start = { ...frame, fields: frame.fields.filter((_, i) => i !== times[1]) };
      const end = { length: frame.length, fields: [frame.fields[times[1]]] };
      frame = outerJoinDataFrames({ frames: [start, end], keepDisplayNames: true, nullMode: () => NULL_RETAIN })!;
    }
    return frame;
  });
  return outerJoinDataFrames({ frames: prepared.filter((f) => f.length > 0) })!;
}

/** How many x values of the joined frame start a state of the row named `row` (a lane, or an operator). */
function starts(joined: DataFrame, row: string): number {
  // outerJoinDataFrames keeps each frame's fields after the one x field
  const states = joined.fields.filter((f) => f.name === 'state' && f.config.displayNameFromDS === row);
  expect(states).toHaveLength(1);
  return (states[0].values as Array<string | null>).filter((v) => v != null).length;
}

describe('State Timeline panel: frames joined on time through @grafana/data outerJoinDataFrames', () => {
  const distinct = (xs: number[]) => new Set(xs).size;

  it('keeps every distinct µs start of a lane on the stateTimeline output', () => {
    const series = panels.stateTimeline;
    const read = frame(series, 'lane_read');
    const us = distinct(values(read, 'startUs'));
    expect(us).toBeGreaterThan(1);
    const joined = stateTimeline(series);
    expect(starts(joined, 'read')).toBe(us);
  });

  it('draws each operator’s phases as a row of its own, one state per phase', () => {
    const series = panels.stateTimeline;
    const phases = series.filter((f) => f.name?.startsWith('phases_'));
    expect(phases.length).toBeGreaterThan(0);
    const joined = stateTimeline(series);
    for (const p of phases) {
      const state = p.fields.find((f) => f.name === 'state')!;
      expect(starts(joined, state.config.displayNameFromDS!)).toBe(distinct(values(p, 'startUs')));
    }
  });

  it('merges a lane’s sub-millisecond reads on the real clock (what issue 25 saw)', () => {
    const series = panels.default.filter((f) => f.name?.startsWith('lane_'));
    const read = frame(series, 'lane_read');
    const joined = stateTimeline(series);
    expect(starts(joined, 'read')).toBeLessThan(distinct(values(read, 'startUs')));
  });

  it('fits every x value into the time range the output names (meta.custom.timeBase)', () => {
    const series = panels.stateTimeline;
    const read = frame(series, 'lane_read');
    const base = read.meta?.custom?.timeBase as { fromMs: number; toMs: number; originUs: number };
    const x = stateTimeline(series).fields[0].values as number[];
    expect(Math.min(...x)).toBeGreaterThanOrEqual(base.fromMs);
    // ends are at least one drawing quantum after their start
    expect(Math.max(...x)).toBeLessThanOrEqual(base.toMs + (read.meta?.custom?.resolutionUs as number));
  });
});

describe('Table panel', () => {
  it('gets the operators frame alone', () => {
    expect(panels.table.map((f) => f.name)).toEqual(['operators']);
    expect(panels.table[0].length).toBe(panels.nodeGraph[0].length);
  });
});
