import { FieldType, toDataFrame } from '@grafana/data';

export interface N {
  id: number;
  parentId: number;
  kind?: string;
  text?: string;
  objectName?: string;
  startUs?: number;
  endUs?: number;
  hasPlan?: boolean;
  logicalReads?: number;
}

/** A statements frame in the docs/frames.md §3.13 shape. */
export function statementsFrame(nodes: N[], statementId = -1) {
  const col = <T>(f: (n: N) => T) => nodes.map(f);
  return toDataFrame({
    name: 'statements',
    meta: { custom: { group: 'statements', statementId } },
    fields: [
      { name: 'id', type: FieldType.number, values: col((n) => n.id) },
      { name: 'parentId', type: FieldType.number, values: col((n) => n.parentId) },
      { name: 'kind', type: FieldType.string, values: col((n) => n.kind ?? 'statement') },
      { name: 'text', type: FieldType.string, values: col((n) => n.text ?? '') },
      { name: 'objectName', type: FieldType.string, values: col((n) => n.objectName ?? '') },
      { name: 'startUs', type: FieldType.number, values: col((n) => n.startUs ?? 0) },
      { name: 'endUs', type: FieldType.number, values: col((n) => n.endUs ?? 0) },
      { name: 'elapsedUs', type: FieldType.number, values: col((n) => (n.endUs ?? 0) - (n.startUs ?? 0)) },
      { name: 'logicalReads', type: FieldType.number, values: col((n) => n.logicalReads ?? 0) },
      { name: 'hasPlan', type: FieldType.boolean, values: col((n) => n.hasPlan ?? false) },
    ],
  });
}
