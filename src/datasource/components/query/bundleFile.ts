/** Reads a bundle file: JSON, or gzip JSON decompressed in the browser. */
export async function readBundleFile(file: Pick<Blob, 'arrayBuffer'>): Promise<unknown> {
  let bytes: Uint8Array = new Uint8Array(await file.arrayBuffer());
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    bytes = await gunzip(bytes);
  }
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`not a QueryReplay bundle (JSON or gzip JSON): ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function gunzip(gz: Uint8Array): Promise<Uint8Array> {
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(gz);
      c.close();
    },
  });
  const reader = input
    .pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)
    .getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    parts.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
