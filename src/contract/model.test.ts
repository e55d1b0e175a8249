import fs from 'fs';
import path from 'path';
import { EVENT_GROUPS, QUERY_TYPES, ReplayQuery, isRunnable, settingsProblems } from '../datasource/types';

// The query model's names must match the Go side (pkg/plugin/query.go) and
// docs/frames.md, which this test reads so that the three cannot drift.
const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'frames.md'), 'utf8');
const goQuery = fs.readFileSync(path.join(__dirname, '..', '..', 'pkg', 'plugin', 'query.go'), 'utf8');

describe('query model contract', () => {
  it('names every query type and event group as the Go side and the doc do', () => {
    for (const t of QUERY_TYPES) {
      expect(goQuery).toContain(`= "${t}"`);
      expect(doc).toContain(`\`${t}\``);
    }
    for (const g of EVENT_GROUPS) {
      expect(goQuery).toContain(`"${g}":`);
      expect(doc).toContain(`\`${g}\``);
    }
    for (const key of ['queryType', 'sql', 'database', 'options', 'traceId', 'traceIds', 'window', 'frames']) {
      expect(goQuery).toContain(`json:"${key}"`);
    }
  });

  it('sends only queries that have what their type needs', () => {
    const id = '0190d5c2a0e87c3b9a51e2f4c6d8b0a1';
    const cases: Array<[ReplayQuery, boolean]> = [
      [{ refId: 'A', sql: 'SELECT 1' }, true],
      [{ refId: 'A', sql: '  ' }, false],
      [{ refId: 'A', queryType: 'probe', sql: 'SELECT 1' }, true],
      [{ refId: 'A', queryType: 'view', traceId: id }, true],
      [{ refId: 'A', queryType: 'view', sql: 'SELECT 1' }, false],
      [{ refId: 'A', queryType: 'bundle', traceId: 'nope' }, false],
      [{ refId: 'A', queryType: 'compare', traceIds: [id, id] }, true],
      [{ refId: 'A', queryType: 'compare', traceIds: [id, ''] }, false],
      [{ refId: 'A', queryType: 'compare', traceIds: [id] }, false],
    ];
    for (const [q, want] of cases) {
      expect({ q, runnable: isRunnable(q) }).toEqual({ q, runnable: want });
    }
  });

  it('checks settings per authentication type', () => {
    expect(settingsProblems({ host: 'db1', user: 'qr' }, true)).toEqual([]);
    expect(settingsProblems({ host: 'db1', authType: 'azuread', azureCredential: 'managedIdentity' }, false)).toEqual(
      []
    );
    expect(settingsProblems({ host: 'db1', authType: 'azuread' }, false)).toEqual([
      'user (the application client id) is missing',
      'tenantId is missing',
      'clientSecret is missing',
    ]);
    expect(settingsProblems({ host: 'db1', authType: 'windows' }, false)).toHaveLength(1);
  });
});
