import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Button, Combobox, ComboboxOption, InlineField, InlineFieldRow, useStyles2 } from '@grafana/ui';
import { ReplayQuery } from '../types';

/** A saved trace as GET resources/traces lists it (docs/frames.md §5). */
export interface SavedTrace {
  traceId: string;
  statement: string;
  database: string;
  startedAt: string;
  events: number;
  durationUs: number;
  bytes: number;
}

interface Props {
  query: ReplayQuery;
  /** The saved traces (null while loading). */
  traces: SavedTrace[] | null;
  onChange: (q: ReplayQuery) => void;
}

const TRACE_ID = /^[0-9a-f]{32}$/;

export function traceOption(t: SavedTrace): ComboboxOption<string> {
  const ms = (t.durationUs / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 });
  return {
    value: t.traceId,
    label: `${new Date(t.startedAt).toLocaleTimeString()} · ${t.statement}`,
    description: `${t.database} · ${t.events.toLocaleString('en-US')} events · ${ms} ms · ${t.traceId}`,
  };
}

/**
 * The compare query's form: two stored traces, A (before) and B (after),
 * picked from the saved traces or pasted as ids. The comparison matches
 * their operators by plan shape; nothing runs on SQL Server.
 */
export function CompareForm({ query, traces, onChange }: Props) {
  const styles = useStyles2(getStyles);
  const ids = [query.traceIds?.[0] ?? '', query.traceIds?.[1] ?? ''];
  const options = (traces ?? []).map(traceOption);
  const set = (i: 0 | 1, id: string) => {
    const next = [...ids];
    next[i] = id;
    onChange({ ...query, queryType: 'compare', traceIds: next });
  };
  const problem = ids.some((id) => id && !TRACE_ID.test(id))
    ? 'A trace id is 32 lower-case hex digits.'
    : !ids[0] || !ids[1]
      ? 'Pick two traces: A (before the change) and B (after it).'
      : ids[0] === ids[1]
        ? 'A and B are the same trace: every operator will compare as unchanged.'
        : null;
  return (
    <div className={styles.form} data-testid="qr-compare-form">
      <InlineFieldRow>
        {(['A', 'B'] as const).map((label, i) => (
          <InlineField
            key={label}
            label={`Trace ${label}`}
            labelWidth={14}
            tooltip={i === 0 ? 'The trace before the change' : 'The trace after the change'}
          >
            <Combobox
              id={`qr-compare-${label.toLowerCase()}`}
              data-testid={`qr-compare-${label.toLowerCase()}`}
              options={options}
              value={ids[i] || null}
              width={60}
              createCustomValue
              placeholder={traces && traces.length === 0 ? 'no saved traces yet' : 'pick a saved trace'}
              onChange={(o) => set(i as 0 | 1, o.value)}
            />
          </InlineField>
        ))}
        <Button
          variant="secondary"
          icon="exchange-alt"
          aria-label="Swap A and B"
          onClick={() => onChange({ ...query, queryType: 'compare', traceIds: [ids[1], ids[0]] })}
        />
      </InlineFieldRow>
      <p className={styles.help} data-testid="qr-compare-help">
        {problem ??
          'Operators are matched by plan shape (kind, object, position), so node ids may differ. Nothing runs on SQL Server.'}
      </p>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  form: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(0.5) }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, margin: 0 }),
});
