import { parseSSE } from './liveStream';

describe('parseSSE', () => {
  test('splits complete events and keeps the rest', () => {
    const { events, rest } = parseSSE('event: frame\ndata: {"a":1}\n\nevent: end\ndata: {"error":""}\n\nevent: fr');
    expect(events).toEqual([
      { event: 'frame', data: '{"a":1}' },
      { event: 'end', data: '{"error":""}' },
    ]);
    expect(rest).toBe('event: fr');
  });
  test('an event split across chunks arrives once whole', () => {
    const a = parseSSE('event: frame\ndata: {"seq"');
    expect(a.events).toEqual([]);
    const b = parseSSE(a.rest + ':2}\n\n');
    expect(b.events).toEqual([{ event: 'frame', data: '{"seq":2}' }]);
  });
  test('CRLF line ends and multi-line data', () => {
    const { events } = parseSSE('data: a\r\ndata: b\r\n\r\n');
    expect(events).toEqual([{ event: 'message', data: 'a\nb' }]);
  });
});
