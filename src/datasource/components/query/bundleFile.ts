import { config } from '@grafana/runtime';

/** Trace id of an uploaded bundle (POST resources/traces). */
export interface Uploaded {
  traceId: string;
}

/**
 * The content type of a bundle file by its first bytes: gzip (the file
 * `queryreplay trace -o x.json.gz` writes) or JSON. The backend tells them
 * apart by the same magic bytes; the header is for people reading logs.
 */
export async function bundleContentType(file: Pick<Blob, 'slice'>): Promise<string> {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  return head[0] === 0x1f && head[1] === 0x8b ? 'application/gzip' : 'application/json';
}

/** The upload resource of a datasource, under Grafana's sub-path (config.appSubUrl). */
export function uploadURL(uid: string): string {
  return `${config.appSubUrl ?? ''}/api/datasources/uid/${encodeURIComponent(uid)}/resources/traces`;
}

/**
 * Uploads a bundle file as it is — gzip as the CLI writes it, or plain JSON —
 * and returns the new trace id. The browser neither decompresses nor parses
 * it: a 200,000-event trace is about 1 MB of gzip but 30–50 MB of JSON, and
 * the backend decompresses within traceStore.maxBundleMB (docs/frames.md §5).
 * Grafana's backendSrv serialises a non-string body (JSON.stringify or form
 * parameters), so the file goes through fetch with Grafana's session cookie.
 */
export async function uploadBundleFile(uid: string, file: Blob): Promise<Uploaded> {
  const headers: Record<string, string> = { 'Content-Type': await bundleContentType(file), Accept: 'application/json' };
  const org = config.bootData?.user?.orgId;
  if (org) {
    // what backendSrv sends: the org the page is in, not the session's last one
    headers['X-Grafana-Org-Id'] = String(org);
  }
  const res = await fetch(uploadURL(uid), { method: 'POST', body: file, headers, credentials: 'same-origin' });
  const text = await res.text();
  let body: { traceId?: unknown; error?: unknown; message?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Grafana's own errors (a proxy's 413, a 502) may not be JSON
  }
  if (!res.ok) {
    const why = body.error ?? body.message ?? (text.trim() || res.statusText);
    throw new Error(`upload refused (${res.status}): ${String(why)}`);
  }
  if (typeof body.traceId !== 'string') {
    throw new Error(`upload answered without a trace id: ${text.slice(0, 200)}`);
  }
  return { traceId: body.traceId };
}
