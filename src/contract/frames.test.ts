import fs from 'fs';
import path from 'path';
import { DataFrame, DataFrameJSON, Field, FieldType, dataFrameFromJSON } from '@grafana/data';

// Go writes these files (go test ./pkg/frames -update) from the real frame
// builders; this test decodes every frame exactly as Grafana's frontend does
// and checks the shapes docs/frames.md promises.
const dir = path.join(__dirname, '..', '..', 'testdata', 'frames');

function load(name: string): DataFrame[] {
  const raw = JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8')) as DataFrameJSON[];
  return raw.map((f) => dataFrameFromJSON(f));
}

function frame(frames: DataFrame[], name: string): DataFrame {
  const f = frames.find((x) => x.name === name);
  if (!f) {
    throw new Error(`no frame ${name} in ${frames.map((x) => x.name).join(', ')}`);
  }
  return f;
}

function field(f: DataFrame, name: string): Field {
  const fl = f.fields.find((x) => x.name === name);
  if (!fl) {
    throw new Error(`frame ${f.name} has no field ${name}`);
  }
  return fl;
}

/** Asserts that each named field exists with the given type. */
function expectFields(f: DataFrame, spec: Record<string, FieldType>) {
  for (const [name, type] of Object.entries(spec)) {
    expect({ frame: f.name, field: name, type: field(f, name).type }).toEqual({ frame: f.name, field: name, type });
  }
}

const { number, string, time, boolean } = FieldType;
const lanes = ['read', 'write', 'lock', 'wait', 'memory', 'split', 'log', 'io'];
const traceId = '0190d5c2a0e87c3b9a51e2f4c6d8b0a1';

describe('Go → TypeScript frame contract', () => {
  it('has a contract file for every response shape', () => {
    expect(fs.readdirSync(dir).sort()).toEqual([
      'compare_response.json',
      // a multi-statement compare: whole-batch verdict and statement pairs
      'compare_statements_response.json',
      'findings.json',
      // real stand-in frames per output, read by panels.test.ts
      'panels.json',
      'probe.json',
      // frames of one picked statement (request field statement = n)
      'statement_response.json',
      'trace_response.json',
      'view_binned.json',
    ]);
  });

  it('decodes a picked statement with its own text, figures and findings', () => {
    const st = load('statement_response');
    const meta = frame(st, 'trace');
    expectFields(meta, { traceId: string, statement: string, durationUs: number });
    expect(meta.fields.find((f) => f.name === 'statement')!.values[0]).not.toEqual('');
    expect(st.map((f) => f.name)).toContain('findings');
    expect(st.map((f) => f.name)).toContain('operators');
  });

  it('decodes a multi-statement compare with its whole-batch verdict', () => {
    const cmp = load('compare_statements_response');
    expectFields(frame(cmp, 'compare'), { traceIdA: string, traceIdB: string, verdict: string });
    expectFields(frame(cmp, 'compare_operators'), { status: string, verdict: string });
    expect(cmp.map((f) => f.name)).toEqual(expect.arrayContaining(['trace_a', 'operators_a']));
  });

  const trace = load('trace_response');

  it('returns the documented frames in order, each with the trace id', () => {
    expect(trace.map((f) => f.name)).toEqual([
      'trace',
      'operators',
      'phases',
      'threads',
      'nodes',
      'edges',
      ...lanes.map((l) => `lane_${l}`),
      'pages',
      'log_records',
      'callstacks',
      'stack_frames',
      'table_io',
      'wait_stats',
    ]);
    for (const f of trace) {
      expect({ name: f.name, traceId: f.meta?.custom?.traceId }).toEqual({ name: f.name, traceId });
    }
  });

  it('decodes the trace meta frame', () => {
    const f = frame(trace, 'trace');
    expect(f.length).toBe(1);
    expectFields(f, {
      traceId: string,
      statement: string,
      start: time,
      end: time,
      startUs: number,
      endUs: number,
      durationUs: number,
      events: number,
      lost: number,
      truncated: boolean,
      unmatched: number,
      persona: string,
    });
    const c = f.meta!.custom!;
    for (const key of [
      'statement',
      'options',
      'timeRange',
      'window',
      'counts',
      'unmatched',
      'lost',
      'truncated',
      'persona',
    ]) {
      expect(c).toHaveProperty(key);
    }
    expect(c.timeRange.zeroTime).toMatch(/^2026-11-29T12:00:00\.000123Z$/);
    expect(Array.isArray(c.binnedLanes)).toBe(true);
  });

  it('decodes operators and phases', () => {
    const ops = frame(trace, 'operators');
    expectFields(ops, {
      nodeId: number,
      parentId: number,
      physicalOp: string,
      start: time,
      end: time,
      startUs: number,
      firstEmitUs: number,
      endUs: number,
      reads: number,
      waits: number,
      spills: number,
      matched: number,
      matchExact: number,
      actualRows: number,
      estimatedRows: number,
    });
    expect(field(ops, 'parentId').values[0]).toBeNull();
    expect(field(ops, 'startUs').config.unit).toBe('µs');
    expectFields(frame(trace, 'phases'), { nodeId: number, phase: string, start: time, end: time, execution: number });
    expectFields(frame(trace, 'threads'), {
      start: time,
      end: time,
      state: string,
      nodeId: number,
      thread: number,
      rows: number,
    });
    expectFields(ops, { notExecuted: boolean, notExecutedReason: string, executions: number });
  });

  it('decodes the plan as a node graph whose edges reference nodes', () => {
    const nodes = frame(trace, 'nodes');
    const edges = frame(trace, 'edges');
    expect(nodes.meta?.preferredVisualisationType).toBe('nodeGraph');
    expect(nodes.fields.some((f) => f.name === 'source')).toBe(false);
    expectFields(nodes, { id: string, title: string, subtitle: string, mainstat: number, secondarystat: number });
    expectFields(edges, { id: string, source: string, target: string, mainstat: number });
    const ids = new Set(field(nodes, 'id').values);
    for (const name of ['source', 'target']) {
      for (const v of field(edges, name).values) {
        expect(ids.has(v)).toBe(true);
      }
    }
    const arcFields = nodes.fields.filter((f) => f.name.startsWith('arc__'));
    expect(arcFields.map((f) => f.name)).toEqual([
      'arc__reads',
      'arc__writes',
      'arc__locks',
      'arc__waits',
      'arc__spills',
      'arc__other',
    ]);
    for (const a of arcFields) {
      expect(a.config.color?.mode).toBe('fixed');
      expect(typeof a.config.color?.fixedColor).toBe('string');
    }
  });

  it('decodes every lane as a state timeline frame with the other fields hidden', () => {
    for (const l of lanes) {
      const f = frame(trace, `lane_${l}`);
      expect(f.fields.slice(0, 3).map((x) => [x.name, x.type])).toEqual([
        ['start', time],
        ['end', time],
        ['state', string],
      ]);
      expect(f.fields.filter((x) => x.type === time)).toHaveLength(2);
      expect(f.meta?.preferredVisualisationPluginId).toBe('queryreplay-replay-panel');
      expect(f.meta?.custom?.lane).toBe(l);
      expect(f.meta?.custom?.binned).toBe(false);
      for (const x of f.fields.slice(3)) {
        expect({ field: `${f.name}.${x.name}`, hide: x.config.custom?.hideFrom }).toEqual({
          field: `${f.name}.${x.name}`,
          hide: { viz: true, legend: true, tooltip: false },
        });
      }
      expectFields(f, {
        nodeId: number,
        startUs: number,
        endUs: number,
        rule: string,
        confidence: string,
        ambiguous: boolean,
        candidates: string,
        index: number,
      });
      for (let r = 0; r < f.length; r++) {
        expect(field(f, 'end').values[r]).toBeGreaterThanOrEqual(field(f, 'start').values[r]);
        // the whole trace is one window: a row's index is its position
        expect(field(f, 'index').values[r]).toBe(r);
      }
    }
    const read = frame(trace, 'lane_read');
    expect(field(read, 'nodeId').values).toContain(null);
    expectFields(read, { pageId: string, file: number, page: number });
    expectFields(frame(trace, 'lane_lock'), {
      resourceType: string,
      open: boolean,
      heldToEnd: boolean,
      acquireSeen: boolean,
    });
    expectFields(frame(trace, 'lane_wait'), { category: string, durationUs: number, open: boolean });
    expectFields(frame(trace, 'lane_memory'), { grantedKB: number, spill: boolean });
    expectFields(frame(trace, 'lane_io'), { offset: number, size: number, completed: boolean });
  });

  it('decodes pages, log records and the flame graph', () => {
    expectFields(frame(trace, 'pages'), {
      pageId: string,
      reads: number,
      writes: number,
      firstUs: number,
      pageType: string,
      indexLevel: number,
      prevPage: string,
      nextPage: string,
    });
    expectFields(frame(trace, 'log_records'), { lsn: string, operation: string, slotId: number });
    const cs = frame(trace, 'callstacks');
    expect(cs.meta?.preferredVisualisationType).toBe('flamegraph');
    expectFields(cs, { label: string, level: number, value: number, self: number });
    const levels = field(cs, 'level').values as number[];
    expect(levels[0]).toBe(0);
    for (let i = 1; i < levels.length; i++) {
      // pre-order: a row is at most one level below the row before it
      expect(levels[i]).toBeLessThanOrEqual(levels[i - 1] + 1);
      expect(levels[i]).toBeGreaterThan(0);
    }
    const pages = frame(trace, 'pages');
    expect(pages.meta?.custom?.pageInfo).toBe(true);
    const levelsOf = field(pages, 'indexLevel').values as Array<number | null>;
    expect(levelsOf.some((l) => l === 0)).toBe(true);
    expect(levelsOf.some((l) => l === null)).toBe(true); // a page without a header stays null
  });

  it('decodes each stack of the trace and the lanes that point at them', () => {
    const sf = frame(trace, 'stack_frames');
    expectFields(sf, {
      stackId: number,
      frame: number,
      label: string,
      module: string,
      symbol: string,
      badge: string,
      category: string,
      moduleBadge: string,
      operatorBadge: string,
      infrastructure: boolean,
      events: number,
      unresolved: string,
    });
    const ids = new Set(field(sf, 'stackId').values as number[]);
    for (const lane of lanes) {
      const f = frame(trace, `lane_${lane}`);
      const stack = field(f, 'stackId');
      expect({ lane, hidden: stack.config.custom?.hideFrom?.viz }).toEqual({ lane, hidden: true });
      for (const id of stack.values as Array<number | null>) {
        // every id a lane row names is a stack the frame holds
        expect(id === null || ids.has(id)).toBe(true);
      }
    }
    expect((field(frame(trace, 'lane_read'), 'stackId').values as Array<number | null>)[0]).toBe(1);
  });

  it('decodes binned lanes: count per bin per operator within the budget', () => {
    const view = load('view_binned');
    const read = frame(view, 'lane_read');
    const c = read.meta!.custom!;
    expect(c.binned).toBe(true);
    expect(read.length).toBeLessThanOrEqual(20);
    expectFields(read, {
      start: time,
      end: time,
      state: string,
      nodeId: number,
      count: number,
      firstUs: number,
      lastUs: number,
    });
    const total = (field(read, 'count').values as number[]).reduce((a, b) => a + b, 0);
    expect(total).toBe(c.inWindow);
    expect(c.binWidthUs).toBeGreaterThan(0);
  });

  it('decodes the probe as numeric-wide numbers for alerting', () => {
    const [p] = load('probe');
    expect(p.meta?.type).toBe('numeric-wide');
    expect(p.length).toBe(1);
    // Alert evaluation keys each number by its labels alone: every number
    // names its metric in a label, and no two share a label set.
    const keys = new Set<string>();
    for (const f of p.fields) {
      expect(f.type).toBe(number);
      expect(f.labels?.metric).toBe(f.name);
      keys.add(JSON.stringify(Object.entries(f.labels ?? {}).sort()));
    }
    expect(keys.size).toBe(p.fields.length);
    expect(p.fields.filter((f) => f.name === 'waits').map((f) => f.labels?.category)).toEqual([
      'Io',
      'Cpu',
      'Concurrency',
      'Parallelism',
      'Other',
    ]);
    expect(p.meta?.custom?.traceId).toBe(traceId);
  });

  it('decodes the findings frame, its JSON columns and its documentation links', () => {
    const [f] = load('findings');
    expect(f.name).toBe('findings');
    expectFields(f, {
      rule: string,
      severity: string,
      confidence: string,
      title: string,
      detail: string,
      hint: string,
      reference: string,
      start: time,
      end: time,
      startUs: number,
      endUs: number,
      primaryNodeId: number,
      evidenceTotal: number,
    });
    expect(f.length).toBeGreaterThan(0);
    for (let i = 0; i < f.length; i++) {
      expect(String(field(f, 'reference').values[i])).toMatch(/^https:\/\/learn\.microsoft\.com\//);
      const evidence = JSON.parse(JSON.stringify(field(f, 'evidence').values[i])) as Array<{
        id: string;
        lane: string;
        index: number;
      }>;
      for (const e of evidence) {
        expect(e.id).toBe(`${e.lane}/${e.index}`);
      }
      expect(Array.isArray(field(f, 'numbers').values[i])).toBe(true);
    }
    expect(field(f, 'reference').config.links?.[0]?.url).toBe('${__value.raw}');
    expect(f.meta?.custom?.traceId).toBe(traceId);
    expect(Object.keys(f.meta?.custom?.counts ?? {}).sort()).toEqual(['critical', 'info', 'warning']);
  });

  it('decodes the compare summary and the per-operator comparison', () => {
    const [summary, ops] = load('compare_response');
    expect([summary.name, ops.name]).toEqual(['compare', 'compare_operators']);
    expect(summary.length).toBe(1);
    expectFields(summary, {
      traceIdA: string,
      traceIdB: string,
      verdict: string,
      readsSource: string,
      replaced: number,
    });
    expectFields(ops, {
      status: string,
      how: string,
      verdict: string,
      nodeIdA: number,
      nodeIdB: number,
      readsA: number,
      readsB: number,
      readsChanged: boolean,
      waitIoUsA: number,
      waitOtherUsA: number,
      phaseEmitUsB: number,
    });
    const status = field(ops, 'status').values as string[];
    const replaced = status.indexOf('replaced');
    expect(replaced).toBeGreaterThanOrEqual(0);
    expect(String(field(ops, 'verdict').values[replaced])).toContain(' replaced ');
    expect(summary.meta?.custom?.traceIds).toHaveLength(2);
  });
});
