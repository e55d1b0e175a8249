import { toDataFrame, FieldType } from '@grafana/data';
import { goldenFrames } from '../testing/fixtures';
import { findingNodes, findingsFromFrames, formatNumber, numberLabel, numberText } from './model';

describe('findingsFromFrames on the Go golden findings frame', () => {
  const report = findingsFromFrames(goldenFrames('findings'))!;

  it('reads every finding in the report order with its severity and confidence', () => {
    expect(report.findings.map((f) => f.rule)).toEqual(['spill', 'cold-cache', 'events-lost', 'reads-concentrated']);
    expect(report.counts).toEqual({ critical: 0, warning: 3, info: 1 });
    const reads = report.findings[3];
    expect(reads.title).toBe('Clustered Index Scan did 93% of the page reads in the trace: 152 of 163 pages');
    // most reads, but a small share of the trace's time: information, not a warning
    expect(reads.severity).toBe('info');
    expect(reads.confidence).toBe('low');
    expect(reads.confidenceReasons).toEqual(["13% of the trace's events were lost"]);
    expect(reads.reference).toMatch(/^https:\/\/learn\.microsoft\.com\//);
  });

  it('reads operators, evidence and numbers from the JSON columns', () => {
    const reads = report.findings[3];
    expect(reads.operators).toEqual([
      { nodeId: 2, name: 'Clustered Index Scan', object: '[dbo].[Orders].[PK_Orders]' },
    ]);
    expect(reads.primaryNodeId).toBe(2);
    expect(reads.evidence[0]).toEqual({ id: 'read/11', lane: 'read', index: 11, t: 320, end: 320, nodeId: 2 });
    expect(reads.evidence).toHaveLength(20);
    expect(reads.evidenceTotal).toBe(152);
    expect(reads.span).toEqual({ startUs: 320, endUs: 469 });
    expect(reads.numbers.map((n) => n.name)).toEqual(['reads', 'totalReads', 'share']);
  });

  it('keeps a finding without evidence in time without a span', () => {
    const lost = report.findings[2];
    expect(lost.rule).toBe('events-lost');
    expect(lost.span).toBeNull();
    expect(lost.evidence).toEqual([]);
    expect(lost.primaryNodeId).toBeNull();
    expect(findingNodes(lost)).toEqual([]);
  });

  it('is null when the frames have no findings frame', () => {
    expect(findingsFromFrames(goldenFrames('trace_response'))).toBeNull();
  });

  it('reads JSON columns sent as strings and skips evidence it cannot place', () => {
    const f = toDataFrame({
      name: 'findings',
      fields: [
        { name: 'rule', type: FieldType.string, values: ['spill'] },
        { name: 'severity', type: FieldType.string, values: ['bogus'] },
        { name: 'startUs', type: FieldType.number, values: [5] },
        { name: 'endUs', type: FieldType.number, values: [9] },
        { name: 'primaryNodeId', type: FieldType.number, values: [4] },
        {
          name: 'evidence',
          type: FieldType.string,
          values: [
            JSON.stringify([
              { id: 'nope/1', lane: 'nope', index: 1, t: 5 },
              { lane: 'memory', index: 0, t: 9 },
            ]),
          ],
        },
        { name: 'operators', type: FieldType.string, values: ['not json'] },
      ],
    });
    const [one] = findingsFromFrames([f])!.findings;
    expect(one.severity).toBe('info');
    expect(one.evidence).toEqual([{ id: 'memory/0', lane: 'memory', index: 0, t: 9, end: 9, nodeId: null }]);
    expect(one.operators).toEqual([]);
    expect(findingNodes(one)).toEqual([4]);
    expect(one.span).toEqual({ startUs: 5, endUs: 9 });
  });
});

describe('numbers', () => {
  it('labels camel-case names without their unit', () => {
    expect(numberLabel('grantedKB')).toBe('granted');
    expect(numberLabel('totalReads')).toBe('total reads');
    expect(numberLabel('pageIOLatchUs')).toBe('page IO latch');
    expect(numberLabel('readAheadIOs')).toBe('read ahead IOs');
    expect(numberLabel('tempdbPagesWritten')).toBe('tempdb pages written');
  });

  it('does not say the unit twice', () => {
    const n = (name: string, unit: string) => numberText({ name, value: 36, unit, source: 'events' });
    expect(n('tempdbPagesWritten', 'pages')).toEqual({ label: 'tempdb pages written', value: '36' });
    expect(n('reads', 'pages')).toEqual({ label: 'reads', value: '36 pages' });
    expect(n('rowsRead', 'rows')).toEqual({ label: 'rows read', value: '36' });
  });

  it('formats each unit the way a DBA reads it', () => {
    const n = (value: number, unit: string) => formatNumber({ name: 'x', value, unit, source: 'events' });
    expect(n(12400, 'pages')).toBe('12,400 pages');
    expect(n(1, 'rows')).toBe('1 row');
    expect(n(93.25, 'percent')).toBe('93%');
    expect(n(2.5, 'percent')).toBe('2.5%');
    expect(n(1500, 'us')).toBe('1.5 ms');
    expect(n(1024, 'KB')).toBe('1,024 KB');
    expect(n(15770, 'KB')).toBe('15.4 MB');
    expect(n(124, 'bytes')).toBe('124 B');
    expect(n(4.26, 'ratio')).toBe('4.3×');
    expect(n(3, 'count')).toBe('3');
  });
});
