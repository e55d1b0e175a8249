import { EVENT_GROUPS } from '../../types';
import { durationText, errorText, modeOf, optionalNumber, toggleGroup } from './options';

describe('query editor options', () => {
  it('traces unless the query names another mode', () => {
    expect(modeOf(undefined)).toBe('trace');
    expect(modeOf('trace')).toBe('trace');
    expect(modeOf('bundle')).toBe('bundle');
    expect(modeOf('probe')).toBe('probe');
    expect(modeOf('compare')).toBe('compare');
    expect(modeOf('view')).toBe('trace');
    expect(modeOf('')).toBe('trace');
  });

  it('clears a number option when emptied', () => {
    expect(optionalNumber('')).toBeUndefined();
    expect(optionalNumber('30')).toBe(30);
  });

  it('turns event groups off and on again in their canonical order', () => {
    const off = toggleGroup(EVENT_GROUPS, 'locks', false);
    expect(off).not.toContain('locks');
    expect(off).toHaveLength(EVENT_GROUPS.length - 1);
    const none = EVENT_GROUPS.reduce((g, x) => toggleGroup(g, x, false), [...EVENT_GROUPS]);
    expect(none).toEqual([]);
    const back = [...EVENT_GROUPS].reverse().reduce((g, x) => toggleGroup(g, x, true), none);
    expect(back).toEqual([...EVENT_GROUPS]);
    expect(toggleGroup(['waits'], 'waits', true)).toEqual(['waits']);
  });

  it('says what a failed request said', () => {
    expect(errorText({ data: { error: 'e', message: 'm' }, message: 'x' })).toBe('e');
    expect(errorText({ data: { message: 'm' }, message: 'x' })).toBe('m');
    expect(errorText(new Error('boom'))).toBe('boom');
    expect(errorText({ status: 502 })).toBe('request failed (502)');
    expect(errorText({})).toBe('request failed (no status)');
  });

  it('shows a duration in milliseconds with at most one decimal', () => {
    expect(durationText({ durationUs: 7740 })).toBe('7.7 ms');
    expect(durationText({ durationUs: 1234567 })).toBe('1,234.6 ms');
    expect(durationText({ durationUs: 0 })).toBe('0 ms');
  });
});
