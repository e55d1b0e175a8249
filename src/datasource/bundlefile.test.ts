import { Blob } from 'buffer';
import { gzipSync } from 'zlib';
import { config } from '@grafana/runtime';
import { uploadBundleFile, uploadURL } from './components/query/bundleFile';

interface Sent {
  url: string;
  init: { method: string; body: Blob; headers: Record<string, string>; credentials: string };
}

/** A fetch that records what it was sent and answers like the backend's POST traces. */
function fakeFetch(status: number, body: string): Sent[] {
  const sent: Sent[] = [];
  (globalThis as unknown as { fetch: unknown }).fetch = async (url: string, init: Sent['init']) => {
    sent.push({ url, init });
    return { ok: status >= 200 && status < 300, status, statusText: 'x', text: async () => body };
  };
  return sent;
}

async function bytesOf(b: Blob): Promise<Buffer> {
  return Buffer.from(await b.arrayBuffer());
}

describe('uploading a bundle file', () => {
  const json = JSON.stringify({ format: 'queryreplay-trace', version: 1, sql: 'SELECT 1' });
  const id = '0190d5c2a0e87c3b9a51e2f4c6d8b0a1';

  afterEach(() => {
    config.appSubUrl = '';
  });

  it('sends a gzip file as it is, not decompressed', async () => {
    const sent = fakeFetch(201, JSON.stringify({ traceId: id }));
    const gz = gzipSync(json);
    const r = await uploadBundleFile('ds1', new Blob([gz]) as unknown as globalThis.Blob);
    expect(r.traceId).toBe(id);
    expect(sent).toHaveLength(1);
    expect(sent[0].init.method).toBe('POST');
    expect(sent[0].init.headers['Content-Type']).toBe('application/gzip');
    expect((await bytesOf(sent[0].init.body)).equals(gz)).toBe(true);
  });

  it('sends plain JSON as it is, not parsed', async () => {
    const sent = fakeFetch(201, JSON.stringify({ traceId: id }));
    const spaced = `  ${json}\n`;
    await uploadBundleFile('ds1', new Blob([spaced]) as unknown as globalThis.Blob);
    expect(sent[0].init.headers['Content-Type']).toBe('application/json');
    expect((await bytesOf(sent[0].init.body)).toString()).toBe(spaced);
  });

  it('posts to the resource under Grafana’s sub-path', async () => {
    config.appSubUrl = '/grafana';
    const sent = fakeFetch(201, JSON.stringify({ traceId: id }));
    await uploadBundleFile('a/b', new Blob([json]) as unknown as globalThis.Blob);
    expect(sent[0].url).toBe('/grafana/api/datasources/uid/a%2Fb/resources/traces');
    expect(uploadURL('x')).toBe('/grafana/api/datasources/uid/x/resources/traces');
  });

  it('says why the backend refused it', async () => {
    fakeFetch(413, JSON.stringify({ error: 'the uploaded bundle exceeds the limit of 256 MB' }));
    await expect(uploadBundleFile('ds1', new Blob([json]) as unknown as globalThis.Blob)).rejects.toThrow(
      /upload refused \(413\): the uploaded bundle exceeds the limit of 256 MB/
    );
  });

  it('names an answer that is not JSON', async () => {
    fakeFetch(502, 'Bad Gateway');
    await expect(uploadBundleFile('ds1', new Blob([json]) as unknown as globalThis.Blob)).rejects.toThrow(
      /upload refused \(502\): Bad Gateway/
    );
  });
});
