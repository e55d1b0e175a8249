import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

interface Props<T extends string | number> {
  label: string;
  value: T;
  options: Array<{ label: string; value: T }>;
  onChange: (v: T) => void;
  testId?: string;
  title?: string;
}

/**
 * A native select in Grafana's input style: small enough for a 6×8 panel's
 * toolbar, keyboard-accessible, and it never overlaps its neighbours.
 */
export function CompactSelect<T extends string | number>({ label, value, options, onChange, testId, title }: Props<T>) {
  const styles = useStyles2(getStyles);
  return (
    <select
      className={styles.select}
      aria-label={label}
      title={title ?? label}
      data-testid={testId}
      value={String(value)}
      onChange={(e) => {
        const found = options.find((o) => String(o.value) === e.target.value);
        if (found) {
          onChange(found.value);
        }
      }}
    >
      {options.map((o) => (
        <option key={String(o.value)} value={String(o.value)}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  select: css({
    flex: 'none',
    height: 24,
    padding: '0 4px',
    background: theme.components.input.background,
    color: theme.components.input.text,
    border: `1px solid ${theme.components.input.borderColor}`,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
    fontFamily: theme.typography.fontFamily,
    cursor: 'pointer',
    '&:focus': { outline: `2px solid ${theme.colors.primary.border}`, outlineOffset: 1 },
  }),
});
