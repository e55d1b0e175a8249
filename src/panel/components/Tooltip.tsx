import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { Description } from '../replay/describe';

interface Props {
  x: number;
  y: number;
  width: number;
  height: number;
  description: Description;
}

const MAX_W = 300;

/** One tooltip element for the whole timeline, placed beside the pointer and kept inside the panel. */
export function Tooltip({ x, y, width, height, description }: Props) {
  const styles = useStyles2(getStyles);
  const left = x + 14 + MAX_W > width ? Math.max(0, x - 14 - MAX_W) : x + 14;
  const rows = description.rows.slice(0, 16);
  const top = Math.max(0, Math.min(y + 10, height - 22 - rows.length * 17));
  return (
    <div className={styles.tip} style={{ left, top }} data-testid="qr-tooltip" role="tooltip">
      <div className={styles.title}>{description.title}</div>
      <table className={styles.table}>
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <td className={styles.key}>{k}</td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  tip: css({
    position: 'absolute',
    pointerEvents: 'none',
    maxWidth: MAX_W,
    background: theme.colors.background.elevated,
    border: `1px solid ${theme.colors.border.medium}`,
    boxShadow: theme.shadows.z2,
    borderRadius: theme.shape.radius.default,
    padding: theme.spacing(0.5, 1),
    fontSize: theme.typography.bodySmall.fontSize,
    zIndex: 2,
  }),
  title: css({ fontWeight: theme.typography.fontWeightMedium, marginBottom: 2, wordBreak: 'break-word' }),
  table: css({
    borderCollapse: 'collapse',
    td: { padding: '0 4px 0 0', verticalAlign: 'top', wordBreak: 'break-all' },
  }),
  key: css({ color: theme.colors.text.secondary, whiteSpace: 'nowrap' }),
});
