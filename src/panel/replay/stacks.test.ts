import { EventStackFrame, StackFrameRow } from '../model/trace';
import { eventStackLines, isInfrastructure, splitFrame, stackLines, stackTree } from './stacks';

const row = (
  label: string,
  level: number,
  badge: string,
  moduleBadge = 'Storage Engine',
  value = 1
): StackFrameRow => ({
  label,
  level,
  value,
  self: 0,
  badge,
  moduleBadge,
});

const rows = [
  row('all stacks', 0, '', '', 4),
  row('sqldk!SOS_Task::Param::Execute+0x1f', 1, 'SqlOs', 'SQL OS', 4),
  row('sqldk!SOS_Scheduler::Run+0x10', 2, 'SqlOs', 'SQL OS', 4),
  row('sqlmin!IndexDataSetSession::GetNextRowValuesInternal+0x2a', 3, 'Dataset', 'Storage Engine', 4),
  row('sqlmin!BPool::Get+0x10', 4, 'BufferPool', 'Storage Engine', 3),
  row('sqlmin!lck_lockInternal+0x5', 4, 'Locking', 'Storage Engine', 1),
];

describe('call stacks', () => {
  const tree = stackTree(rows);

  it('rebuilds the tree from the pre-order rows', () => {
    expect(tree).toHaveLength(1);
    const dataset = tree[0].children[0].children[0].children[0];
    expect(dataset.row.badge).toBe('Dataset');
    expect(dataset.children.map((c) => c.row.badge)).toEqual(['BufferPool', 'Locking']);
  });

  it('collapses a chain of infrastructure frames into one line', () => {
    const lines = stackLines(tree, false, new Set());
    expect(lines.map((l) => (l.kind === 'collapsed' ? `[${l.count} infra]` : l.node.row.badge))).toEqual([
      '',
      '[2 infra]',
      'Dataset',
      'BufferPool',
      'Locking',
    ]);
  });

  it('expands a collapsed run when asked, or shows all infrastructure', () => {
    const collapsed = stackLines(tree, false, new Set()).find((l) => l.kind === 'collapsed')!;
    const id = collapsed.kind === 'collapsed' ? collapsed.id : '';
    expect(stackLines(tree, false, new Set([id]))).toHaveLength(6);
    expect(stackLines(tree, true, new Set())).toHaveLength(6);
  });

  it('classifies and splits frames', () => {
    expect(isInfrastructure(rows[1])).toBe(true);
    expect(isInfrastructure(rows[3])).toBe(false);
    expect(splitFrame('sqlmin!BPool::Get+0x10')).toEqual({ module: 'sqlmin', symbol: 'BPool::Get', offset: '0x10' });
    expect(splitFrame('all stacks')).toEqual({ module: '', symbol: 'all stacks', offset: '' });
  });
});

describe("the selected event's own stack", () => {
  const f = (frame: number, label: string, infrastructure: boolean): EventStackFrame => ({
    frame,
    label,
    module: label.split('!')[0],
    symbol: label.split('!')[1] ?? '',
    badge: infrastructure ? 'XEventInfrastructure' : 'BufferPool',
    category: '',
    moduleBadge: 'Storage Engine',
    operatorBadge: '',
    infrastructure,
    unresolved: '',
  });
  const frames = [
    f(0, 'sqlmin!XeSqlPkg::physical_page_read::Publish', true),
    f(1, 'sqlmin!BPool::ReadPage', false),
    f(2, 'sqlmin!BPool::Get', false),
    f(3, 'sqldk!SOS_Task::Param::Execute', true),
    f(4, 'sqldk!SOS_Scheduler::RunTask', true),
  ];

  it('collapses each run of infrastructure frames into one line', () => {
    const lines = eventStackLines(frames, false, new Set());
    expect(lines.map((l) => (l.kind === 'frame' ? l.frame.label : `⋯${l.frames.length}`))).toEqual([
      '⋯1',
      'sqlmin!BPool::ReadPage',
      'sqlmin!BPool::Get',
      '⋯2',
    ]);
  });

  it('expands one run, or shows every frame', () => {
    const expanded = eventStackLines(frames, false, new Set(['e3']));
    expect(expanded).toHaveLength(5);
    expect(expanded[0].kind).toBe('collapsed');
    expect(eventStackLines(frames, true, new Set()).every((l) => l.kind === 'frame')).toBe(true);
  });
});
