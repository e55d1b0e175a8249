import { toDataFrame } from '@grafana/data';
import { N, statementsFrame } from '../testing/statements';
import { canPick, currentStatement, statementBands, statementLabel, statementsFromFrames } from './statements';

// procedure_nested: EXEC dbo.RegionReport, whose second statement EXECs dbo.CustomerOrders
const nested: N[] = [
  { id: 0, parentId: -1, kind: 'batch', text: 'EXEC dbo.RegionReport', endUs: 900 },
  { id: 1, parentId: 0, text: 'EXEC dbo.RegionReport', startUs: 10, endUs: 890 },
  { id: 2, parentId: 1, text: 'SELECT 1', objectName: 'dbo.RegionReport', startUs: 20, endUs: 300, hasPlan: true },
  { id: 3, parentId: 1, text: 'EXEC dbo.CustomerOrders', objectName: 'dbo.RegionReport', startUs: 310, endUs: 880 },
  { id: 4, parentId: 3, text: 'SELECT 2', objectName: 'dbo.CustomerOrders', startUs: 320, endUs: 870, hasPlan: true },
];

describe('statementsFromFrames', () => {
  it('reads the tree in order with each node at its depth', () => {
    const t = statementsFromFrames([statementsFrame(nested, 2)])!;
    expect(t.nodes.map((n) => [n.id, n.depth])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 2],
      [4, 3],
    ]);
    expect(t.current).toBe(2);
  });

  it('puts children under their parent whatever the row order, and drops orphans', () => {
    const shuffled = [nested[4], nested[2], nested[0], nested[3], nested[1], { id: 9, parentId: 42 }];
    const t = statementsFromFrames([statementsFrame(shuffled)])!;
    expect(t.nodes.map((n) => n.id)).toEqual([0, 1, 2, 3, 4]);
  });

  it('survives a cycle in parent ids', () => {
    const t = statementsFromFrames([
      statementsFrame([
        { id: 0, parentId: -1 },
        { id: 1, parentId: 2 },
        { id: 2, parentId: 1 },
      ]),
    ]);
    expect(t!.nodes.map((n) => n.id)).toEqual([0]);
  });

  it('is null without a statements frame', () => {
    expect(statementsFromFrames([toDataFrame({ name: 'trace', fields: [] })])).toBeNull();
  });

  it('takes the statement the frames draw from any frame', () => {
    const other = toDataFrame({ name: 'operators', fields: [], meta: { custom: { statementId: 4 } } });
    expect(currentStatement([toDataFrame({ name: 'trace', fields: [] }), other])).toBe(4);
    expect(currentStatement([])).toBe(-1);
  });
});

describe('statementBands', () => {
  it('gives every statement its span, outermost first, the drawn one marked', () => {
    const bands = statementBands(statementsFromFrames([statementsFrame(nested, 4)])!);
    expect(bands.map((b) => [b.id, b.fromUs, b.toUs, b.current])).toEqual([
      [1, 10, 890, false],
      [2, 20, 300, false],
      [3, 310, 880, false],
      [4, 320, 870, true],
    ]);
  });
});

describe('picking', () => {
  it('picks statements with a plan other than the one drawn', () => {
    const t = statementsFromFrames([statementsFrame(nested, 2)])!;
    expect(t.nodes.filter((n) => canPick(t, n)).map((n) => n.id)).toEqual([4]);
  });

  it('labels a procedure statement with its procedure', () => {
    const t = statementsFromFrames([statementsFrame(nested)])!;
    expect(t.nodes.map(statementLabel)).toEqual([
      'Batch',
      'EXEC dbo.RegionReport',
      'dbo.RegionReport: SELECT 1',
      'dbo.RegionReport: EXEC dbo.CustomerOrders',
      'dbo.CustomerOrders: SELECT 2',
    ]);
  });
});
