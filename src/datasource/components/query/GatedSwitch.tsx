import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { InlineField, InlineSwitch, Tooltip, useStyles2 } from '@grafana/ui';
import { OptionGate } from '../../health';

/**
 * A trace option's switch that the server may refuse: disabled, with the
 * reason in its tooltip and beside it, when the health check says the
 * trace would be refused. A query that already asks for it can still turn
 * it off.
 */
export function GatedSwitch(p: {
  id: string;
  label: string;
  tooltip: string;
  gate: OptionGate;
  value: boolean;
  onChange: (v: boolean) => void;
}) {
  const styles = useStyles2(getStyles);
  const refused = !p.gate.allowed;
  const toggle = (
    <InlineSwitch
      id={p.id}
      value={p.value}
      disabled={refused && !p.value}
      onChange={(e) => p.onChange(e.currentTarget.checked)}
    />
  );
  return (
    <InlineField
      label={p.label}
      labelWidth="auto"
      tooltip={refused ? `Not available: ${p.gate.reason}` : p.tooltip}
      disabled={refused && !p.value}
    >
      <div className={styles.gated}>
        {refused ? (
          // a disabled input gets no pointer events: the tooltip hangs on a focusable wrapper
          <Tooltip content={`Not available: ${p.gate.reason}`} placement="top">
            <span tabIndex={0} data-testid={`${p.id}-why`}>
              {toggle}
            </span>
          </Tooltip>
        ) : (
          toggle
        )}
        {refused && (
          <span className={styles.refused} data-testid={`${p.id}-refused`}>
            {p.value ? `refused: ${p.gate.reason}; turn it off` : 'not available here'}
          </span>
        )}
      </div>
    </InlineField>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  gated: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1) }),
  refused: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
});
