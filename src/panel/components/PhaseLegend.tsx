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

/** What the operator rows' fills mean (hatched, dotted, solid, …), under the timeline. */
export function PhaseLegend({ palette, width }: { palette: Palette; width: number }) {
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
