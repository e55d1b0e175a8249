import { PHASE_KEYS, phaseLook } from './legend';

describe('phase legend', () => {
  it('names each look as the timeline paints it', () => {
    expect(phaseLook('consume')).toBe('hatched');
    expect(phaseLook('build')).toBe('hatched');
    expect(phaseLook('probe')).toBe('dotted');
    expect(phaseLook('emit')).toBe('solid');
    expect(phaseLook('reexecuted')).toBe('ticks');
    for (const k of PHASE_KEYS.filter((k) => !['span', 'not-executed'].includes(k.kind))) {
      expect(k.look).toBe(phaseLook(k.kind));
    }
  });

  it("uses the terminal replay's words", () => {
    // cmd/queryreplay/replaytext.go phaseLegend
    const terminal = '░ consume  ▒ build  ▓ probe  █ emit  ≡ re-executed  · open, phase unknown';
    for (const k of PHASE_KEYS.filter((k) => k.kind !== 'not-executed')) {
      expect(terminal).toContain(k.label);
    }
  });
});
