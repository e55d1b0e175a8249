/**
 * The viewer page's side of a live trace (docs/frames.md §3.14): the viewer
 * plays Grafana Live's part with server-sent events on
 * GET /api/live/stream?channel=… (pkg/viewer stream.go), read with fetch so
 * that the page's token header goes with it (EventSource sends no headers).
 * Each `frame` event is the whole live frame so far; `end` closes the stream.
 */

export interface SSEEvent {
  event: string;
  data: string;
}

/**
 * Splits server-sent event text into events; returns the events complete so
 * far and the rest (an event not yet ended by a blank line).
 */
export function parseSSE(buffer: string): { events: SSEEvent[]; rest: string } {
  const events: SSEEvent[] = [];
  let rest = buffer.replace(/\r\n/g, '\n');
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) {
        event = line.slice(6).trim();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
    if (data.length > 0) {
      events.push({ event, data: data.join('\n') });
    }
  }
  return { events, rest };
}

/** Bounds one pending event's text: a live frame stays far below it (2 MiB). */
export const MAX_EVENT_CHARS = 16 << 20;

/**
 * Follows a live channel: onFrame gets each frame's JSON, in order; resolves
 * with the end event's data ({error, cancelled}) when the stream ends.
 * Aborting signal closes the connection, which cancels the trace.
 */
export async function followLive(
  channel: string,
  onFrame: (frame: unknown) => void,
  signal: AbortSignal,
  fetchFn: typeof fetch = fetch
): Promise<{ error?: string; cancelled?: boolean }> {
  const res = await fetchFn(`/api/live/stream?channel=${encodeURIComponent(channel)}`, { signal });
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    let msg = text;
    try {
      msg = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not JSON: the text as it is
    }
    throw new Error(`live stream: ${res.status} ${msg}`);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      return { error: 'the live stream closed before the trace ended' };
    }
    const parsed = parseSSE(buffer + decoder.decode(value, { stream: true }));
    buffer = parsed.rest;
    if (buffer.length > MAX_EVENT_CHARS) {
      throw new Error('live stream: an event over the page bound');
    }
    for (const e of parsed.events) {
      if (e.event === 'end') {
        return JSON.parse(e.data);
      }
      if (e.event === 'frame') {
        onFrame(JSON.parse(e.data));
      }
    }
  }
}
