import { Blob } from 'buffer';
import { DecompressionStream, ReadableStream } from 'stream/web';
import { TextDecoder } from 'util';
import { gzipSync } from 'zlib';
import { readBundleFile } from './components/QueryEditor';

// jsdom lacks the web streams and TextDecoder the browser has; Node's are the same APIs
Object.assign(globalThis, { DecompressionStream, ReadableStream, TextDecoder });

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
