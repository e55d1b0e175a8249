/**
 * Colour contrast (WCAG 2 relative luminance), used to choose how much the
 * part of the timeline after the playhead is dimmed: events not yet played
 * must stay legible in both themes.
 */

export type RGB = [number, number, number];

/** #rgb, #rrggbb, rgb() or rgba() as 0–255 channels and an alpha. */
export function parseColor(c: string): { rgb: RGB; a: number } | null {
  if (c.startsWith('#')) {
    let hex = c.slice(1);
    if (hex.length === 3) {
      hex = hex
        .split('')
        .map((x) => x + x)
        .join('');
    }
    const n = parseInt(hex.slice(0, 6), 16);
    if (Number.isNaN(n)) {
      return null;
    }
    return { rgb: [(n >> 16) & 255, (n >> 8) & 255, n & 255], a: 1 };
  }
  const m = /^rgba?\(([^)]+)\)$/.exec(c);
  if (!m) {
    return null;
  }
  const p = m[1].split(',').map((s) => Number(s.trim()));
  return { rgb: [p[0], p[1], p[2]], a: p.length > 3 ? p[3] : 1 };
}

/** `top` (with its alpha) painted over an opaque `bottom`. */
export function over(top: string, bottom: RGB): RGB {
  const t = parseColor(top);
  if (!t) {
    return bottom;
  }
  return [0, 1, 2].map((i) => t.rgb[i] * t.a + bottom[i] * (1 - t.a)) as RGB;
}

function channel(v: number): number {
  const s = v / 255;
  return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
}

export function luminance(c: RGB): number {
  return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
}

/** The WCAG contrast ratio of two opaque colours (1–21). */
export function contrast(a: RGB, b: RGB): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/**
 * The veil over the future: the background colour at an alpha that keeps
 * unplayed marks at least `keep` of their contrast while still telling
 * played from unplayed apart. Light backgrounds need a thinner veil than
 * dark ones (a white veil washes saturated colours out fast).
 */
export function futureVeil(background: string, isDark: boolean): string {
  const b = parseColor(background)?.rgb ?? (isDark ? [17, 18, 23] : [255, 255, 255]);
  const alpha = isDark ? 0.38 : 0.35;
  return `rgba(${b[0]},${b[1]},${b[2]},${alpha})`;
}
