import { createTheme } from '@grafana/data';
import { paletteFromTheme } from './palette';
import { contrast, over, parseColor } from './contrast';

// Issue 28: in the light theme, events not yet played were barely visible
// (a 60% white veil left the read lane at 1.7:1 against the background).
describe('the veil over events not yet played', () => {
  for (const mode of ['light', 'dark'] as const) {
    const p = paletteFromTheme(createTheme({ colors: { mode } }));
    const bg = parseColor(p.background)!.rgb;
    for (const [lane, color] of Object.entries(p.lane)) {
      it(`keeps ${lane} legible yet dimmer in the ${mode} theme`, () => {
        const mark = over(color, bg);
        const full = contrast(mark, bg) - 1;
        const veiled = contrast(over(p.future, mark), bg) - 1;
        // legible: at least 40% of the contrast the mark has once played,
        // or WCAG's 3:1 for graphics (https://www.w3.org/TR/WCAG21/#non-text-contrast)
        const legible = veiled >= 0.4 * full || veiled + 1 >= 3;
        expect({ lane, full, veiled, legible }).toMatchObject({ legible: true });
        // and still told apart from what has played
        expect(veiled).toBeLessThanOrEqual(0.8 * full);
      });
    }
  }

  it('parses the colour forms the themes use', () => {
    expect(parseColor('#fff')!.rgb).toEqual([255, 255, 255]);
    expect(parseColor('rgba(1, 2, 3, 0.5)')).toEqual({ rgb: [1, 2, 3], a: 0.5 });
    expect(contrast([0, 0, 0], [255, 255, 255])).toBeCloseTo(21, 0);
  });
});
