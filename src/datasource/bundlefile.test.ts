/**
 * @jest-environment node
 */
import { gzipSync } from 'zlib';
import { readBundleFile } from './components/QueryEditor';

jest.mock('@grafana/runtime', () => ({}));
jest.mock('@grafana/ui', () => ({}));

describe('reading a bundle file for upload', () => {
  const bundle = { format: 'queryreplay-trace', version: 1, sql: 'SELECT 1' };

  it('reads JSON', async () => {
    expect(await readBundleFile(new Blob([JSON.stringify(bundle)]))).toEqual(bundle);
  });

  it('reads gzip JSON', async () => {
    expect(await readBundleFile(new Blob([gzipSync(JSON.stringify(bundle))]))).toEqual(bundle);
  });

  it('names a file that is neither', async () => {
    await expect(readBundleFile(new Blob(['not json']))).rejects.toThrow(/not a QueryReplay bundle/);
  });
});
