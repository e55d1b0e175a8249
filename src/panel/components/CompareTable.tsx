import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { CompareLink, pairOf } from '../compare/link';
import { Comparison, PairStatus, StatementPair, statementOfRow } from '../compare/model';
import { Column, breakdown, cellPair, columnsFor, direction, formatPair, pairName } from '../compare/table';
import { useReplay } from './useStore';

interface Props {
  comparison: Comparison;
  link: CompareLink;
  width: number;
}

export const STATUS_LABEL: Record<PairStatus, string> = {
  same: 'same',
  changed: 'changed',
  replaced: 'replaced',
  added: 'added',
  removed: 'removed',
};

/** "s1 ↔ s2": a statement pair by its tree node ids, "–" on the side that did not run it. */
export function statementLabel(s: Pick<StatementPair, 'a' | 'b'>): string {
  const id = (n: number | null) => (n === null ? '–' : `s${n}`);
  return `${id(s.a)} ↔ ${id(s.b)}`;
}

/**
 * The per-operator comparison: one row per operator pair (matched pairs in
 * A's plan order, then removed, then added), its status and verdict, and the
 * figures of both sides with significant changes marked better or worse.
 * With statement trees (issue 30) the rows come statement by statement,
 * each group headed by its statement pair: text, status and own verdict.
 * Clicking a row selects the operator in both timelines.
 */
export function CompareTable({ comparison: c, link, width }: Props) {
  const styles = useStyles2(getStyles);
  const selected = pairOf(useReplay(link.a, (s) => s.highlight ?? null));
  const shown = columnsFor(c.rows, width);
  const readsLabel =
    c.readsSource === 'logical' ? 'logical reads (the plans’ runtime counters)' : 'page reads (events)';
  const span = 2 + shown.length;
  return (
    <div className={styles.wrap} data-testid="qr-compare-table">
      <table className={styles.table}>
        <thead>
          <tr>
            <th title="node id in A → node id in B">operator</th>
            <th>status</th>
            {shown.map((col) => (
              <th key={col.key} title={col.key === 'reads' ? readsLabel : undefined}>
                {col.label}
              </th>
            ))}
          </tr>
        </thead>
        {c.rows.map((r, i) => {
          const n = pairName(r);
          const k = statementOfRow(c, r);
          const head = k >= 0 && (i === 0 || statementOfRow(c, c.rows[i - 1]) !== k);
          return (
            <React.Fragment key={i}>
              {head && <StatementHead pair={c.statements[k]} index={k} span={span} />}
              <tbody
                className={cx(styles.pair, selected === i && styles.selected)}
                onClick={() => link.toggle(i)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    e.stopPropagation();
                    link.toggle(i);
                  }
                }}
                tabIndex={0}
                data-testid={`qr-compare-row-${i}`}
                data-status={r.status}
                data-statement={k >= 0 ? k : undefined}
                data-selected={selected === i ? 'true' : 'false'}
              >
                <tr aria-selected={selected === i}>
                  <td className={styles.op}>
                    <span className={styles.nodes}>{n.nodes}</span> <span className={styles.opName}>{n.name}</span>
                    {n.object && <div className={styles.object}>{n.object}</div>}
                  </td>
                  <td>
                    <span className={cx(styles.status, styles[r.status])}>{STATUS_LABEL[r.status]}</span>
                  </td>
                  {shown.map((col) => (
                    <Cell key={col.key} row={r} column={col} />
                  ))}
                </tr>
                <tr>
                  <td colSpan={span} className={styles.verdict} title={r.how ? `matched by: ${r.how}` : undefined}>
                    {r.verdict}
                  </td>
                </tr>
              </tbody>
            </React.Fragment>
          );
        })}
      </table>
    </div>
  );
}

/** A statement group's head: which statement pair the rows below belong to, its status and its own verdict. */
function StatementHead({ pair, index, span }: { pair: StatementPair; index: number; span: number }) {
  const styles = useStyles2(getStyles);
  const text = pair.text.replace(/\s+/g, ' ').trim();
  return (
    <tbody className={styles.stmt} data-testid={`qr-compare-statement-${index}`} data-status={pair.status}>
      <tr>
        <td colSpan={span} title={pair.how ? `${pair.text}\n(matched by ${pair.how})` : pair.text}>
          <span className={styles.nodes}>{statementLabel(pair)}</span>{' '}
          <span className={cx(styles.status, styles[pair.status])}>{STATUS_LABEL[pair.status]}</span>{' '}
          <code className={styles.stmtText}>{text}</code>
          <div className={styles.verdict}>{pair.verdict}</div>
        </td>
      </tr>
    </tbody>
  );
}

function Cell({ row, column }: { row: Comparison['rows'][number]; column: Column }) {
  const styles = useStyles2(getStyles);
  if (column.breakdown) {
    const lines = breakdown(row, column);
    return (
      <td className={styles.num}>
        {lines.map((l) => (
          <div
            key={l.name}
            className={cx(l.pair.changed && styles.significant, dirClass(styles, direction(l.pair, column)))}
          >
            {l.name} {l.text}
          </div>
        ))}
      </td>
    );
  }
  const p = cellPair(row, column);
  const title = column.names
    ? column.metrics
        .map((m) => [column.names?.[m] ?? m, formatPair(row.metrics[m], column.unit)])
        .filter(([, t]) => t)
        .map(([n, t]) => `${n}: ${t}`)
        .join('\n')
    : undefined;
  return (
    <td
      className={cx(styles.num, p.changed && styles.significant, dirClass(styles, direction(p, column)))}
      title={title}
    >
      {formatPair(p, column.unit)}
    </td>
  );
}

function dirClass(styles: ReturnType<typeof getStyles>, d: 'better' | 'worse' | null): string | undefined {
  return d === 'better' ? styles.better : d === 'worse' ? styles.worse : undefined;
}

const getStyles = (theme: GrafanaTheme2) => {
  const v = theme.visualization;
  const badge = (color: string) => css({ color: v.getColorByName(color), borderColor: v.getColorByName(color) });
  return {
    wrap: css({ overflow: 'auto', height: '100%', fontSize: theme.typography.bodySmall.fontSize }),
    table: css({
      borderCollapse: 'collapse',
      width: '100%',
      th: {
        textAlign: 'left',
        color: theme.colors.text.secondary,
        fontWeight: theme.typography.fontWeightMedium,
        padding: theme.spacing(0, 1, 0.5, 0.5),
        position: 'sticky',
        top: 0,
        background: theme.colors.background.primary,
        whiteSpace: 'nowrap',
      },
      td: { padding: theme.spacing(0.25, 1, 0, 0.5), verticalAlign: 'top' },
    }),
    pair: css({
      cursor: 'pointer',
      borderTop: `1px solid ${theme.colors.border.weak}`,
      '&:hover': { background: theme.colors.action.hover },
      '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: -2 },
    }),
    selected: css({
      background: theme.colors.action.selected,
      boxShadow: `inset 3px 0 0 ${theme.colors.primary.main}`,
    }),
    op: css({ minWidth: 160 }),
    opName: css({ fontWeight: theme.typography.fontWeightMedium, color: theme.colors.text.primary }),
    nodes: css({ color: theme.colors.text.secondary, fontVariantNumeric: 'tabular-nums', marginRight: 2 }),
    object: css({ color: theme.colors.text.secondary }),
    verdict: css({ color: theme.colors.text.secondary, paddingBottom: `${theme.spacing(0.5)} !important` }),
    stmt: css({
      borderTop: `2px solid ${theme.colors.border.medium}`,
      background: theme.colors.background.secondary,
      td: { paddingTop: theme.spacing(0.5) },
    }),
    stmtText: css({
      color: theme.colors.text.primary,
      background: 'none',
      overflow: 'hidden',
      textOverflow: 'ellipsis',
      whiteSpace: 'nowrap',
      maxWidth: '60ch',
      display: 'inline-block',
      verticalAlign: 'bottom',
    }),
    status: css({
      border: '1px solid',
      borderRadius: theme.shape.radius.pill,
      padding: '0 6px',
      whiteSpace: 'nowrap',
    }),
    same: css({ color: theme.colors.text.secondary, borderColor: theme.colors.border.medium }),
    changed: badge('orange'),
    replaced: badge('blue'),
    added: badge('green'),
    removed: badge('red'),
    significant: css({ color: theme.colors.text.primary, fontWeight: theme.typography.fontWeightMedium }),
    num: css({ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums', color: theme.colors.text.secondary }),
    better: css({ color: `${theme.colors.success.text} !important`, fontWeight: theme.typography.fontWeightMedium }),
    worse: css({ color: `${theme.colors.error.text} !important`, fontWeight: theme.typography.fontWeightMedium }),
  };
};
