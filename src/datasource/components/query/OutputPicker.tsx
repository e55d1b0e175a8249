import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, PanelData } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { Button, InlineField, InlineFieldRow, RadioButtonGroup, useStyles2 } from '@grafana/ui';
import { QueryOutput, ReplayQuery } from '../../types';

type Choice = QueryOutput | 'all';

/** The outputs, each named by the built-in panel that reads it (docs/frames.md §3.12). */
export const OUTPUTS: Array<{ label: string; value: Choice; description: string }> = [
  { label: 'All frames', value: 'all', description: 'every frame: the replay panel and Explore' },
  { label: 'Plan', value: 'nodeGraph', description: 'nodes and edges for the Node Graph panel' },
  { label: 'Call stacks', value: 'flameGraph', description: 'the call-stack frame first, for the Flame Graph panel' },
  {
    label: 'Phases and lanes',
    value: 'stateTimeline',
    description: 'for the State Timeline panel, on a scaled clock: 1 µs of the trace is 1 ms',
  },
  { label: 'Operators', value: 'table', description: 'the per-operator table, for the Table panel' },
];

/** The State Timeline output's time base (meta.custom.timeBase of its frames). */
export interface TimeBase {
  fromMs: number;
  toMs: number;
}

/** The time base of the response's scaled frames, or null when it has none. */
export function timeBaseOf(data: PanelData | undefined): TimeBase | null {
  for (const f of data?.series ?? []) {
    const tb = f.meta?.custom?.timeBase as Partial<TimeBase> | undefined;
    if (typeof tb?.fromMs === 'number' && typeof tb?.toMs === 'number') {
      return { fromMs: tb.fromMs, toMs: tb.toMs };
    }
  }
  return null;
}

/**
 * Sets the dashboard's time range to the trace on the scaled clock: the
 * State Timeline draws the panel's time range, and Grafana's default of the
 * last hours would leave a trace of milliseconds a sliver. Grafana reads an
 * absolute range from the URL's from/to as epoch milliseconds.
 */
export function fitTimeRange(tb: TimeBase) {
  // at least one ms wide: Grafana refuses a range whose ends are equal
  locationService.partial({ from: String(tb.fromMs), to: String(Math.max(tb.toMs, tb.fromMs + 1)) }, true);
}

/** Picks what the query returns: all frames, or what one built-in panel reads. */
export function OutputPicker(p: { query: ReplayQuery; data?: PanelData; onChange: (q: ReplayQuery) => void }) {
  const styles = useStyles2(getStyles);
  const value: Choice = p.query.output ?? 'all';
  const tb = value === 'stateTimeline' ? timeBaseOf(p.data) : null;
  return (
    <InlineFieldRow>
      <InlineField
        label="Output"
        labelWidth={14}
        tooltip="what the query returns: all frames, or what one built-in panel reads"
      >
        <RadioButtonGroup<Choice>
          options={OUTPUTS}
          value={value}
          onChange={(v) => p.onChange({ ...p.query, output: v === 'all' ? undefined : v })}
        />
      </InlineField>
      {value === 'stateTimeline' && (
        <span className={styles.help} data-testid="qr-output-scaled">
          Times are scaled: 00:00:01.000 is 1 ms into the trace.
          {tb && (
            <Button size="sm" variant="secondary" icon="clock-nine" onClick={() => fitTimeRange(tb)}>
              Fit time range to the trace
            </Button>
          )}
        </span>
      )}
    </InlineFieldRow>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  help: css({
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    display: 'flex',
    gap: theme.spacing(1),
    alignItems: 'center',
  }),
});
