import React, { useEffect, useRef } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { LegendKey, PHASE_KEYS } from '../render/legend';
import { Palette, withAlpha } from '../render/palette';
import { phaseFill } from '../render/timeline';

export const LEGEND_H = 18;

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
    <div className={styles.root} style={{ width, height: LEGEND_H }} data-testid="qr-phase-legend">
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
          lock escalation
        </span>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1.5),
    overflow: 'hidden',
    whiteSpace: 'nowrap',
    fontSize: 11,
    color: theme.colors.text.secondary,
    flex: 'none',
  }),
  key: css({ display: 'inline-flex', alignItems: 'center', gap: 4 }),
});
