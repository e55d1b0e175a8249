import { throttled } from './throttle';

describe('throttled', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('calls at once, then at most once per interval, and never drops the last call', () => {
    const listener = jest.fn();
    const t = throttled(listener, 250);
    t.call();
    expect(listener).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 10; i++) {
      jest.advanceTimersByTime(16);
      t.call();
    }
    expect(listener).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(250 - 160);
    expect(listener).toHaveBeenCalledTimes(2);
    jest.advanceTimersByTime(1000);
    expect(listener).toHaveBeenCalledTimes(2);
    t.call();
    expect(listener).toHaveBeenCalledTimes(3);
  });

  it('cancels a pending trailing call', () => {
    const listener = jest.fn();
    const t = throttled(listener, 250);
    t.call();
    t.call();
    t.cancel();
    jest.advanceTimersByTime(1000);
    expect(listener).toHaveBeenCalledTimes(1);
  });
});
