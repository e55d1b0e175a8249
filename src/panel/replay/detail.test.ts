import { goldenFrames, goldenTrace } from '../testing/fixtures';
import { DetailCache, budgetFor, covers, needsDetail } from './detail';

jest.useFakeTimers();

const viewFrames = goldenFrames('view_binned');
const bounds = { fromUs: 0, toUs: 1_000_000 };

describe('zoomed-in detail', () => {
  it('is needed only for binned lanes whose bins are coarser than the pixels', () => {
    const trace = goldenTrace();
    expect(needsDetail(trace, ['read'], { fromUs: 0, toUs: 900 }, 1000)).toBe(false);
    const binned = { ...trace, lanes: { read: { ...trace.lanes.read!, binned: true, binWidthUs: 100 } } };
    expect(needsDetail(binned, ['read'], { fromUs: 0, toUs: 900 }, 900)).toBe(true);
    expect(needsDetail(binned, ['read'], { fromUs: 0, toUs: 900_000 }, 900)).toBe(false);
    expect(budgetFor(100)).toBe(500);
    expect(budgetFor(1000)).toBe(2000);
  });

  it('debounces, fetches a margin around the window and caches the answer', async () => {
    const fetcher = jest.fn().mockResolvedValue(viewFrames);
    const changes: unknown[] = [];
    const cache = new DetailCache(fetcher, (d) => changes.push(d));
    cache.request({ fromUs: 1000, toUs: 2000 }, 500, bounds);
    cache.request({ fromUs: 1100, toUs: 2100 }, 500, bounds);
    expect(fetcher).not.toHaveBeenCalled();
    jest.advanceTimersByTime(200);
    await Promise.resolve();
    await Promise.resolve();
    expect(fetcher).toHaveBeenCalledTimes(1);
    expect(fetcher.mock.calls[0][0]).toEqual({ fromUs: 600, toUs: 2600 });
    expect(fetcher.mock.calls[0][1]).toBe(2000);
    const d = cache.lookup({ fromUs: 1200, toUs: 2000 }, 500);
    expect(d).not.toBeNull();
    expect(d!.lanes.read?.binned).toBe(true);
    // covered: no second fetch
    cache.request({ fromUs: 1200, toUs: 2000 }, 500, bounds);
    jest.advanceTimersByTime(200);
    expect(fetcher).toHaveBeenCalledTimes(1);
    expect(changes.filter(Boolean)).toHaveLength(1);
  });

  it('keeps the error and lets a later request succeed', async () => {
    const fetcher = jest.fn().mockRejectedValueOnce(new Error('view: trace not found')).mockResolvedValue(viewFrames);
    const cache = new DetailCache(fetcher, () => undefined);
    cache.request({ fromUs: 0, toUs: 100 }, 500, bounds);
    jest.advanceTimersByTime(200);
    await Promise.resolve();
    await Promise.resolve();
    expect(cache.error).toBe('view: trace not found');
    cache.request({ fromUs: 0, toUs: 100 }, 500, bounds);
    jest.advanceTimersByTime(200);
    await Promise.resolve();
    await Promise.resolve();
    expect(cache.error).toBeNull();
  });

  it('does not answer a window with detail fetched for a much wider one', () => {
    const d = { window: { fromUs: 0, toUs: 10_000 }, budget: 1000, lanes: { read: { binned: true } as never } };
    expect(covers(d, { fromUs: 0, toUs: 5000 }, 500)).toBe(true);
    expect(covers(d, { fromUs: 0, toUs: 100 }, 500)).toBe(false);
    expect(covers(d, { fromUs: 9000, toUs: 11_000 }, 500)).toBe(false);
  });
});
