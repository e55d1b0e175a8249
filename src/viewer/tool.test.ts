import { fileTooLarge, pageURL, queryTitle, withRun } from './tool';

describe('withRun', () => {
  const run = () => '1700000000000-' + 'ab'.repeat(16);
  it('gives a trace query with a batch a run request', () => {
    expect(withRun({ queryType: 'trace', sql: 'SELECT 1' }, run).run).toBe(run());
    expect(withRun({ sql: 'SELECT 1' }, run).run).toBe(run());
  });
  it('keeps a run request the query has (a reload re-sends it)', () => {
    expect(withRun({ sql: 'SELECT 1', run: 'kept' }, run).run).toBe('kept');
  });
  it('never adds one to other query types or an empty batch', () => {
    for (const q of [{ queryType: 'bundle', traceId: 'x' }, { queryType: 'compare' }, { sql: '  ' }, {}]) {
      expect(withRun(q, run).run).toBeUndefined();
    }
  });
});

describe('pageURL', () => {
  it('puts the query (with its run request) in the URL and drops what named another', () => {
    const u = new URL(
      pageURL(
        'http://127.0.0.1:5000/?sql=SELECT+2&traceId=abc&theme=light&width=900',
        { refId: 'A', datasource: { uid: 'x' }, queryType: 'trace', sql: 'SELECT 1', run: 'r1' },
        'SELECT 1'
      )
    );
    expect(JSON.parse(u.searchParams.get('query')!)).toEqual({ queryType: 'trace', sql: 'SELECT 1', run: 'r1' });
    expect(u.searchParams.get('sql')).toBeNull();
    expect(u.searchParams.get('traceId')).toBeNull();
    expect(u.searchParams.get('theme')).toBe('light');
    expect(u.searchParams.get('width')).toBe('900');
    expect(u.searchParams.get('title')).toBe('SELECT 1');
  });
});

describe('fileTooLarge', () => {
  it('refuses a file over the bound, naming both and the flag', () => {
    const why = fileTooLarge(3 << 20, 2 << 20);
    expect(why).toContain('3 MB exceeds');
    expect(why).toContain('2 MB');
    expect(why).toContain('--max-bundle-mb');
  });
  it('accepts a file at the bound, and any file when no bound is known', () => {
    expect(fileTooLarge(2 << 20, 2 << 20)).toBeNull();
    expect(fileTooLarge(5 << 30, 0)).toBeNull();
  });
});

describe('queryTitle', () => {
  it('makes one line of at most 80 characters', () => {
    expect(queryTitle('SELECT a\n  FROM t')).toBe('SELECT a FROM t');
    const long = queryTitle('SELECT ' + 'x, '.repeat(60));
    expect(long.length).toBe(80);
    expect(long.endsWith('…')).toBe(true);
    expect(queryTitle('   ')).toBe('Query replay');
  });
});
