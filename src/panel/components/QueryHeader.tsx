import React, { useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { IconButton, useStyles2 } from '@grafana/ui';
import { QueryFacts, WaitStat, count, optionsText, rowsText } from '../model/summary';

export const HEADER_H = 42;

/** The header's height: its facts wrap onto a second line below 1,700 px, so none is cut. */
export function headerHeight(width: number): number {
  return width >= 1700 ? HEADER_H : HEADER_H + 16;
}

interface Props {
  facts: QueryFacts;
  waits: WaitStat[] | null;
  width: number;
}

const ms1 = (us: number) => `${(us / 1000).toFixed(1)} ms`;
const ms2 = (us: number) => `${(us / 1000).toFixed(2)} ms`;

/** One fact of the header: its name in the shared vocabulary and its number. */
function Fact({ name, value, title, testId }: { name: string; value: string; title?: string; testId: string }) {
  const styles = useStyles2(getStyles);
  return (
    <span className={styles.fact} title={title ?? `${name}: ${value}`} data-testid={testId}>
      <span className={styles.name}>{name}</span> {value}
    </span>
  );
}

/**
 * The query in view: the statement (expandable), where it ran and what it
 * cost, with the same names and numbers as the terminal replay.
 */
export function QueryHeader({ facts: f, waits, width }: Props) {
  const styles = useStyles2(getStyles);
  const [open, setOpen] = useState(false);
  const oneLine = f.statement.replace(/\s+/g, ' ').trim();
  const top = (waits ?? []).slice(0, 3);
  const plan = (v: number | null) => (v === null ? 'unknown (no plan counters)' : count(v));
  return (
    <div className={styles.root} style={{ width, height: headerHeight(width) }} data-testid="qr-header">
      <div className={styles.line}>
        <IconButton
          name={open ? 'angle-down' : 'angle-right'}
          size="sm"
          aria-label={open ? 'Hide the statement' : 'Show the whole statement'}
          tooltip={open ? 'Hide the statement' : 'Show the whole statement'}
          onClick={() => setOpen(!open)}
          data-testid="qr-header-expand"
        />
        <code className={styles.sql} title={f.statement} data-testid="qr-header-sql">
          {oneLine}
        </code>
        <span className={styles.where} title={`database ${f.database}, SQL Server ${f.serverVersion} (${f.persona})`}>
          {f.database} · SQL Server {f.serverVersion}
        </span>
      </div>
      <div className={styles.facts}>
        <Fact name="elapsed" value={ms1(f.elapsedUs)} testId="qr-fact-elapsed" />
        <Fact name="rows" value={rowsText(f)} testId="qr-fact-rows" />
        <Fact name="logical reads" value={plan(f.logicalReads)} testId="qr-fact-logical" />
        <Fact name="physical reads" value={plan(f.physicalReads)} testId="qr-fact-physical" />
        <Fact name="read-ahead reads" value={plan(f.readAheads)} testId="qr-fact-readahead" />
        <Fact
          name="CPU"
          value={f.cpuMs === null ? 'unknown (no QueryTimeStats)' : `${count(f.cpuMs)} ms`}
          testId="qr-fact-cpu"
        />
        <Fact name="waited" value={ms2(f.waitUs)} testId="qr-fact-waits" />
        {top.length > 0 && (
          <Fact
            name="top waits"
            value={top.map((w) => `${w.waitType} ${ms2(w.waitUs)}`).join(', ')}
            testId="qr-fact-topwaits"
          />
        )}
        <Fact name="options" value={optionsText(f.options).join(', ')} testId="qr-fact-options" />
        {f.warnings.length > 0 && (
          <button
            className={styles.warn}
            title={f.warnings.join('\n')}
            onClick={() => setOpen(true)}
            data-testid="qr-fact-warnings"
          >
            ⚠ {f.warnings.length} {f.warnings.length === 1 ? 'warning' : 'warnings'}
          </button>
        )}
      </div>
      {open && (
        <div className={styles.overlay} data-testid="qr-header-statement">
          <pre className={styles.pre}>{f.statement}</pre>
          {f.warnings.length > 0 && (
            <ul className={styles.warnings}>
              {f.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({
    position: 'relative',
    flex: 'none',
    display: 'flex',
    flexDirection: 'column',
    justifyContent: 'center',
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    fontSize: theme.typography.bodySmall.fontSize,
    color: theme.colors.text.secondary,
  }),
  line: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(1.5),
    minWidth: 0,
    whiteSpace: 'nowrap',
    overflow: 'hidden',
  }),
  facts: css({
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    columnGap: theme.spacing(1.5),
    rowGap: 0,
    minWidth: 0,
    overflow: 'hidden',
    paddingLeft: 4,
  }),
  sql: css({
    flex: 1,
    minWidth: 0,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    color: theme.colors.text.primary,
    background: 'none',
    border: 'none',
    padding: 0,
  }),
  where: css({ flex: 'none', color: theme.colors.text.secondary }),
  fact: css({
    flex: 'none',
    color: theme.colors.text.primary,
    '&:last-child': { flex: '0 1 auto', overflow: 'hidden', textOverflow: 'ellipsis' },
  }),
  name: css({ color: theme.colors.text.secondary }),
  warn: css({
    flex: 'none',
    background: 'none',
    border: 'none',
    padding: 0,
    cursor: 'pointer',
    color: theme.colors.warning.text,
  }),
  overlay: css({
    position: 'absolute',
    top: '100%',
    left: 0,
    right: 0,
    zIndex: 10,
    maxHeight: 320,
    overflow: 'auto',
    padding: theme.spacing(1),
    background: theme.colors.background.primary,
    border: `1px solid ${theme.colors.border.medium}`,
    boxShadow: theme.shadows.z2,
  }),
  pre: css({ margin: 0, whiteSpace: 'pre-wrap', fontSize: theme.typography.bodySmall.fontSize }),
  warnings: css({ margin: theme.spacing(1, 0, 0, 2), color: theme.colors.warning.text }),
});
