import React, { useEffect, useRef } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { LegendKey, PHASE_KEYS } from '../render/legend';
import { Palette, withAlpha } from '../render/palette';
import { phaseFill } from '../render/timeline';

export const LEGEND_H = 18;

/** About how wide a key is: its swatch, the gaps and its 11 px text (6 px a character). */
const keyPx = (label: string) => 18 + 4 + 12 + label.length * 6;
const ESCALATION_LABEL = 'lock escalation';

/**
 * The legend's height under a plot `width` wide: one line when every key fits, else two (a narrow
 * panel wraps the keys rather than cutting "open, phase unknown" and hiding the keys after it).
 */
export function legendHeight(width: number, escalations = 0): number {
  const need =
    PHASE_KEYS.reduce((w, k) => w + keyPx(k.label), 0) + (escalations > 0 ? keyPx(ESCALATION_LABEL) + 12 : 0);
  return need > width ? 2 * LEGEND_H : LEGEND_H;
}

/** One swatch, painted with the timeline's own fill for the phase. */
function Swatch({ k, color, border }: { k: LegendKey; color: string; border: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const ctx = ref.current?.getContext('2d');
    if (!ctx) {
      return;
    }
    ctx.clearRect(0, 0, 18, 10);
    if (k.look === 'faint') {
      ctx.fillStyle = withAlpha(color, 0.18);
      ctx.fillRect(0, 0, 18, 10);
    } else if (k.look === 'dashed') {
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = border;
      ctx.strokeRect(0.5, 0.5, 17, 9);
    } else {
      ctx.fillStyle = phaseFill(ctx, color, k.kind);
      ctx.fillRect(0, 0, 18, 10);
    }
  }, [k, color, border]);
  return <canvas ref={ref} width={18} height={10} aria-hidden />;
}

/** The Lock lane's escalation mark (render/timeline.ts drawEscalations), as a swatch. */
function EscalationSwatch({ palette }: { palette: Palette }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const ctx = ref.current?.getContext('2d');
    if (!ctx) {
      return;
    }
    ctx.clearRect(0, 0, 12, 10);
    ctx.fillStyle = palette.escalation;
    ctx.fillRect(5, 0, 2, 10);
    ctx.beginPath();
    ctx.moveTo(1.5, 0.5);
    ctx.lineTo(10.5, 0.5);
    ctx.lineTo(6, 8);
    ctx.closePath();
    ctx.fill();
    ctx.strokeStyle = palette.text;
    ctx.stroke();
  }, [palette]);
  return <canvas ref={ref} width={12} height={10} aria-hidden />;
}

/**
 * What the operator rows' fills mean (hatched, dotted, solid, …), under the
 * timeline, and the Lock lane's escalation mark when the trace has any.
 */
export function PhaseLegend({
  palette,
  width,
  escalations = 0,
}: {
  palette: Palette;
  width: number;
  escalations?: number;
}) {
  const styles = useStyles2(getStyles);
  const color = palette.operator(1);
  return (
    <div
      className={styles.root}
      style={{ width, height: legendHeight(width, escalations) }}
      data-testid="qr-phase-legend"
    >
      {PHASE_KEYS.map((k) => (
        <span key={k.kind} className={styles.key} title={k.title} data-look={k.look}>
          <Swatch k={k} color={color} border={palette.textDisabled} />
          {k.label}
        </span>
      ))}
      {escalations > 0 && (
        <span
          className={styles.key}
          title={`on the Lock lane: row and page locks became one table lock (${escalations} in this trace); hover a mark for mode, object and locks before`}
          data-look="escalation"
          data-testid="qr-legend-escalation"
        >
          <EscalationSwatch palette={palette} />
          {ESCALATION_LABEL}
        </span>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    alignContent: 'flex-start',
    columnGap: theme.spacing(1.5),
    rowGap: 0,
    lineHeight: `${LEGEND_H}px`,
    overflow: 'hidden',
    whiteSpace: 'nowrap',
    fontSize: 11,
    color: theme.colors.text.secondary,
    flex: 'none',
  }),
  key: css({ display: 'inline-flex', alignItems: 'center', gap: 4 }),
});
