import { ScopedVars } from '@grafana/data';
import { TestTemplateSrv } from '../test/templateSrv';
import { ReplayQuery } from './types';
import {
  databaseOptions,
  DISPLAY_SQL_CHARS,
  interpolateQuery,
  parseVariableQuery,
  queryDisplayText,
  Replace,
  traceOptions,
  VARIABLE_FORMAT,
  VARIABLE_LABEL_CHARS,
} from './variables';

const srvReplace =
  (vars: Record<string, string | string[]>): Replace =>
  (text, scopedVars, fmt) =>
    new TestTemplateSrv(vars).replace(text, scopedVars, fmt);

// Statement text a dashboard variable may hold: quotes, ODBC braces, brackets,
// backslashes, `$`, line breaks, Unicode. Each must arrive exactly as typed.
const STATEMENTS = [
  "SELECT name FROM sys.objects WHERE name = N'it''s'",
  'SELECT {fn NOW()}',
  "SELECT [a]]b], '\\', '$x', '${database}'\r\nFROM t -- ü ✓",
  "EXEC sp_executesql N'SELECT @p', N'@p int', @p = 1",
];

describe('interpolateQuery', () => {
  it('replaces ${sql} and ${database} with the values exactly as typed (raw format)', () => {
    for (const sql of STATEMENTS) {
      for (const database of ['AdventureWorks', "O'Brien DB", 'db]x', 'Données']) {
        const q: ReplayQuery = { refId: 'A', sql: '${sql}', database: '${database}' };
        const out = interpolateQuery(q, undefined, srvReplace({ sql, database }));
        expect(out.sql).toBe(sql);
        expect(out.database).toBe(database);
      }
    }
  });

  it('interpolates every syntax Grafana documents, inside longer text', () => {
    const r = srvReplace({ t: 'orders', db: 'Sales' });
    const q: ReplayQuery = { refId: 'A', sql: 'SELECT * FROM $t JOIN [[t]] ON 1=1 -- ${t}', database: '[[db]]' };
    const out = interpolateQuery(q, undefined, r);
    expect(out.sql).toBe('SELECT * FROM orders JOIN orders ON 1=1 -- orders');
    expect(out.database).toBe('Sales');
  });

  it('interpolates traceId and each of traceIds', () => {
    const a = '0123456789abcdef0123456789abcdef';
    const b = 'fedcba9876543210fedcba9876543210';
    const r = srvReplace({ a, b });
    expect(interpolateQuery({ refId: 'A', queryType: 'view', traceId: '${a}' }, undefined, r).traceId).toBe(a);
    expect(
      interpolateQuery({ refId: 'A', queryType: 'compare', traceIds: ['$a', '${b}'] }, undefined, r).traceIds
    ).toEqual([a, b]);
  });

  it('prefers scoped variables (repeated panels, links) over dashboard ones', () => {
    const scoped: ScopedVars = { database: { text: 'tempdb', value: 'tempdb' } };
    const out = interpolateQuery({ refId: 'A', database: '${database}' }, scoped, srvReplace({ database: 'master' }));
    expect(out.database).toBe('tempdb');
  });

  it('asks for the raw format for every field, so SQL is not quoted', () => {
    const seen: Array<string | undefined> = [];
    const r: Replace = (text, sv, fmt) => {
      seen.push(fmt);
      return new TestTemplateSrv({ db: ['a', 'b'] }).replace(text, sv, fmt);
    };
    const out = interpolateQuery(
      { refId: 'A', sql: "SELECT 'x'", database: '${db}', traceId: '', traceIds: ['x'] },
      undefined,
      r
    );
    expect(seen).toEqual([VARIABLE_FORMAT, VARIABLE_FORMAT, VARIABLE_FORMAT, VARIABLE_FORMAT]);
    expect(out.sql).toBe("SELECT 'x'");
    expect(out.database).not.toBe('{a,b}');
  });

  it('keeps a format written in the text', () => {
    const out = interpolateQuery({ refId: 'A', sql: 'SELECT ${v:sqlstring}' }, undefined, srvReplace({ v: "it's" }));
    expect(out.sql).toBe("SELECT 'it''s'");
  });

  it('leaves unknown variables, other fields and the input alone', () => {
    const q: ReplayQuery = {
      refId: 'A',
      queryType: 'trace',
      sql: 'SELECT $missing',
      options: { clearBufferPool: false, events: ['locks'] },
      frames: ['trace'],
    };
    const before = JSON.stringify(q);
    const out = interpolateQuery(q, undefined, srvReplace({}));
    expect(out).toEqual(q);
    expect(out).not.toBe(q);
    expect(JSON.stringify(q)).toBe(before);
    expect('database' in out).toBe(false);
  });
});

describe('queryDisplayText', () => {
  it('names the type, database and the statement on one line, cut to a bound', () => {
    expect(queryDisplayText({ refId: 'A', sql: 'SELECT 1\n  FROM t', database: 'db' })).toBe(
      'trace in db: SELECT 1 FROM t'
    );
    const long = 'SELECT ' + 'x,'.repeat(500);
    const text = queryDisplayText({ refId: 'A', queryType: 'probe', sql: long });
    expect(text.startsWith('probe: SELECT x,')).toBe(true);
    expect(text.length).toBe('probe: '.length + DISPLAY_SQL_CHARS);
  });

  it('names stored traces', () => {
    const id = 'ab'.repeat(16);
    expect(queryDisplayText({ refId: 'A', queryType: 'view', traceId: id })).toBe(`view ${id}`);
    expect(queryDisplayText({ refId: 'A', queryType: 'compare', traceIds: [id, id] })).toBe(`compare ${id} vs ${id}`);
  });
});

describe('variable queries', () => {
  it('accepts databases and traces, whatever the case and spacing', () => {
    expect(parseVariableQuery(' Databases ')).toBe('databases');
    expect(parseVariableQuery('traces')).toBe('traces');
  });

  it('refuses anything else, naming what is accepted', () => {
    for (const bad of ['', 'SELECT name FROM sys.databases', 'trace', undefined, 42, { query: 'databases' }]) {
      expect(() => parseVariableQuery(bad)).toThrow(/databases, traces/);
    }
  });

  it('values databases by name and traces by id, labels bounded', () => {
    expect(databaseOptions([{ name: 'a b' }, { name: "O'x" }])).toEqual([
      { text: 'a b', value: 'a b' },
      { text: "O'x", value: "O'x" },
    ]);
    const id = 'cd'.repeat(16);
    const [o] = traceOptions([
      { traceId: id, statement: 'SELECT\n' + 'y'.repeat(200), startedAt: '2026-01-02T03:04:05Z' },
    ]);
    expect(o.value).toBe(id);
    expect(o.text).toBe('SELECT ' + 'y'.repeat(VARIABLE_LABEL_CHARS - 8) + '… (2026-01-02T03:04:05Z)');
  });
});
