import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { StatementBand } from '../model/statements';
import { xOf } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { useReplay } from './useStore';

interface Props {
  bands: StatementBand[];
  store: ReplayStore;
  width: number;
  onPick: (id: number) => void;
}

export const BANDS_H = 12;

/**
 * The statement boundaries under the timeline: one band per statement from
 * its start to its end, on the timeline's own scale (it follows a zoom),
 * the drawn statement marked. A band is clicked to draw that statement.
 */
export function StatementBands({ bands, store, width, onPick }: Props) {
  const styles = useStyles2(getStyles);
  const window = useReplay(store, (s) => s.window);
  return (
    <div className={styles.root} style={{ width, height: BANDS_H }} data-testid="qr-statement-bands">
      {bands.map((b) => {
        const x0 = Math.max(0, xOf(window, width, b.fromUs));
        const x1 = Math.min(width, xOf(window, width, b.toUs));
        if (x1 < 0 || x0 > width) {
          return null;
        }
        return (
          <div
            key={b.id}
            className={cx(styles.band, b.current && styles.current)}
            style={{ left: x0, width: Math.max(2, x1 - x0), top: Math.min(b.depth - 1, 2) * 3 }}
            title={`${b.label}\n${b.fromUs.toFixed(0)}–${b.toUs.toFixed(0)} µs`}
            data-testid={`qr-statement-band-${b.id}`}
            onClick={() => onPick(b.id)}
          />
        );
      })}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ position: 'relative', overflow: 'hidden', flex: 'none' }),
  band: css({
    position: 'absolute',
    height: BANDS_H - 6,
    boxSizing: 'border-box',
    borderLeft: `2px solid ${theme.colors.text.secondary}`,
    borderRight: `2px solid ${theme.colors.text.secondary}`,
    background: theme.colors.background.secondary,
    cursor: 'pointer',
  }),
  current: css({ background: theme.colors.primary.transparent, borderColor: theme.colors.primary.border }),
});
