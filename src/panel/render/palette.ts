import { GrafanaTheme2 } from '@grafana/data';
import { ALL_LANES, LANE_DEFS, LaneName } from '../model/lanes';
import { futureVeil } from './contrast';

/** Colours of the replay, all from the Grafana theme (so light and dark both work). */
export interface Palette {
  isDark: boolean;
  background: string;
  laneBackground: string;
  laneBackgroundAlt: string;
  border: string;
  grid: string;
  text: string;
  textWeak: string;
  textDisabled: string;
  playhead: string;
  selection: string;
  hover: string;
  /** Dims the part of the timeline after the playhead. */
  future: string;
  dragFill: string;
  flash: string;
  unmatched: string;
  /** Lock escalation marks on the Lock lane: apart from the lane's own colour. */
  escalation: string;
  lane: Record<LaneName, string>;
  /** Colour of an operator, by NodeId. */
  operator: (nodeId: number) => string;
  fontFamily: string;
}

export function paletteFromTheme(theme: GrafanaTheme2): Palette {
  const v = theme.visualization;
  const lane = {} as Record<LaneName, string>;
  for (const l of ALL_LANES) {
    lane[l] = l === 'plan' ? theme.colors.text.primary : v.getColorByName(LANE_DEFS[l].color);
  }
  const classic = v.palette.map((c) => v.getColorByName(c));
  return {
    isDark: theme.isDark,
    background: theme.colors.background.primary,
    laneBackground: theme.colors.background.primary,
    laneBackgroundAlt: theme.colors.background.secondary,
    border: theme.colors.border.weak,
    grid: theme.colors.border.weak,
    text: theme.colors.text.primary,
    textWeak: theme.colors.text.secondary,
    textDisabled: theme.colors.text.disabled,
    playhead: theme.colors.error.main,
    selection: theme.colors.primary.main,
    hover: theme.colors.action.hover,
    future: futureVeil(theme.colors.background.primary, theme.isDark),
    dragFill: theme.colors.primary.transparent,
    flash: theme.isDark ? '#ffffff' : '#000000',
    unmatched: theme.colors.text.disabled,
    escalation: theme.colors.warning.main,
    lane,
    operator: (id: number) => (id < 0 ? theme.colors.text.disabled : classic[id % classic.length]),
    fontFamily: theme.typography.fontFamily,
  };
}

/** The same colour with an alpha, for #rrggbb, #rgb and rgb()/rgba() strings. */
export function withAlpha(color: string, alpha: number): string {
  if (color.startsWith('#')) {
    let hex = color.slice(1);
    if (hex.length === 3) {
      hex = hex
        .split('')
        .map((c) => c + c)
        .join('');
    }
    const n = parseInt(hex.slice(0, 6), 16);
    return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
  }
  const m = /^rgba?\(([^)]+)\)$/.exec(color);
  if (m) {
    const [r, g, b] = m[1].split(',').map((s) => s.trim());
    return `rgba(${r},${g},${b},${alpha})`;
  }
  return color;
}
