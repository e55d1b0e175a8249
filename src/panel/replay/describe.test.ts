import { Operator } from '../model/trace';
import { describeOperator } from './describe';

/** A key lookup that read 14 pages logically and none physically (a warm cache). */
function lookup(over: Partial<Operator> = {}): Operator {
  return {
    nodeId: 5,
    parentId: 0,
    physicalOp: 'Clustered Index Seek',
    name: 'Key Lookup',
    logicalOp: 'Clustered Index Seek',
    behavior: 'streaming',
    object: 'dbo.Orders.PK_Orders',
    timeSource: 'events',
    startUs: 1000,
    firstEmitUs: 1000,
    endUs: 8500,
    durationUs: 7500,
    reads: 0,
    writes: 0,
    locks: 0,
    waits: 3,
    spills: 0,
    splits: 0,
    logRecords: 0,
    waitUs: 1476,
    matched: 3,
    matchExact: 0,
    matchStrong: 0,
    matchWeak: 0,
    matchLow: 3,
    actualRows: 14,
    actualExecutions: 14,
    actualElapsedMs: 7,
    actualCpuMs: 2,
    logicalReads: 14,
    physicalReads: 0,
    estimatedRows: 1,
    executed: true,
    notExecutedReason: '',
    executions: 1,
    phases: [],
    threads: [],
    depth: 1,
    order: 1,
    children: [],
    ...over,
  };
}

describe('describeOperator (issue 26: numbers a DBA can trust)', () => {
  it('names a key lookup as SSMS does and keeps the physical operator', () => {
    const d = describeOperator(lookup(), 'us');
    expect(d.title).toBe('5 Key Lookup');
    expect(d.rows).toContainEqual(['physical operator', 'Clustered Index Seek']);
  });

  it('shows each kind of read under its own name, and the plan’s elapsed and CPU', () => {
    const rows = new Map(describeOperator(lookup(), 'us').rows);
    expect(rows.get('logical reads (plan)')).toBe('14');
    expect(rows.get('physical reads (plan)')).toBe('0');
    expect(rows.get('page reads (trace)')).toBe('0');
    expect(rows.get('elapsed (plan)')).toBe('7 ms');
    expect(rows.get('CPU (plan)')).toBe('2 ms');
    expect(rows.has('reads')).toBe(false);
  });

  it('shows waits as time first, with their count', () => {
    const rows = new Map(describeOperator(lookup(), 'us').rows);
    expect(rows.get('waits')).toMatch(/^1\.\d+ ms waited \(3 waits\)$/);
  });

  it('leaves out plan counters the frame does not have', () => {
    const rows = new Map(
      describeOperator(
        lookup({ logicalReads: null, physicalReads: null, actualElapsedMs: null, actualCpuMs: null }),
        'us'
      ).rows
    );
    expect(rows.has('logical reads (plan)')).toBe(false);
    expect(rows.has('elapsed (plan)')).toBe(false);
    expect(rows.get('page reads (trace)')).toBe('0');
  });
});
