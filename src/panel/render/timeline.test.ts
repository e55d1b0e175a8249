import { createTheme } from '@grafana/data';
import { ALL_LANES, EventLaneName } from '../model/lanes';
import { goldenTrace } from '../testing/fixtures';
import { RecordingContext } from '../testing/fakeCanvas';
import { layoutTimeline } from './layout';
import { paletteFromTheme } from './palette';
import { ColorBy, drawBase } from './timeline';

const trace = goldenTrace();
const palette = paletteFromTheme(createTheme());
const layout = layoutTimeline(1000, 400, ALL_LANES, trace.operators);

/** The fills of what drawBase drew inside one lane's plot area, in drawing order (lane background left out). */
function laneFills(colorBy: ColorBy, name: EventLaneName): string[] {
  const ctx = new RecordingContext();
  drawBase(ctx as unknown as CanvasRenderingContext2D, {
    layout,
    window: { fromUs: trace.startUs, toUs: trace.endUs },
    trace,
    lanes: {},
    pyramid: () => null,
    palette,
    colorBy,
    filterNode: null,
    selectedNode: null,
    unit: 'auto',
  });
  const box = layout.lanes.find((l) => l.name === name)!;
  const backgrounds = [palette.laneBackground, palette.laneBackgroundAlt];
  return ctx.rects
    .filter((r) => r.y >= box.y && r.y + r.h <= box.y + box.h && r.x >= layout.plotX - 2)
    .filter((r) => !(r.w === layout.plotW && backgrounds.includes(r.fill)))
    .map((r) => r.fill);
}

describe('colour by operator or by lane', () => {
  const read = trace.lanes.read!;
  const byOperator = Array.from({ length: read.n }, (_, i) => palette.operator(read.node[i]));

  it('has events whose operator colour is not the lane colour (or the tests below prove nothing)', () => {
    expect(read.n).toBe(4);
    expect(byOperator.filter((c) => c !== palette.lane.read).length).toBeGreaterThanOrEqual(2);
  });

  it('draws each event in its operator colour when colouring by operator', () => {
    expect(laneFills('operator', 'read')).toEqual(byOperator);
  });

  it('draws every event of a lane in the lane colour when colouring by lane', () => {
    expect(laneFills('lane', 'read')).toEqual(Array(read.n).fill(palette.lane.read));
    // an interval lane draws a bar and a start tick per lock, both in the lane's colour
    const locks = laneFills('lane', 'lock');
    expect(locks.length).toBeGreaterThanOrEqual(trace.lanes.lock!.n);
    expect(new Set(locks)).toEqual(new Set([palette.lane.lock]));
  });
});
