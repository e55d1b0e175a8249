import { DataFrame } from '@grafana/data';
import { goldenFrames } from '../testing/fixtures';

/**
 * A compare response from the Go golden files: the compare and
 * compare_operators frames (testdata/frames/compare_response.json, the
 * sample against a copy whose Orders scan became a seek), then the sample's
 * own frames as both sides, suffixed and marked as the backend does.
 */
export function compareFrames(): DataFrame[] {
  const side = (s: 'a' | 'b') =>
    goldenFrames('trace_response').map((f) => ({
      ...f,
      name: `${f.name}_${s}`,
      meta: { ...f.meta, custom: { ...(f.meta?.custom ?? {}), side: s } },
    }));
  return [...goldenFrames('compare_response'), ...side('a'), ...side('b')];
}
