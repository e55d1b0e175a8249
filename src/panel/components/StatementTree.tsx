import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { StatementNode, StatementTree as Tree, canPick, statementLabel } from '../model/statements';
import { count } from '../model/summary';

interface Props {
  tree: Tree;
  /** Draws the picked statement's own operators and events. */
  onPick: (id: number) => void;
  /** The statement being fetched, and why the last pick failed. */
  pending: number | null;
  error: string | null;
}

const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;

/**
 * The statement tree (batch → statements → the statements of the
 * procedures they called), each with its elapsed, rows, reads and waits.
 * A statement with its own plan is picked by a click: the replay then
 * draws that statement's operators and events.
 */
export function StatementTree({ tree, onPick, pending, error }: Props) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.root} data-testid="qr-statements">
      {error && <div className={styles.error}>{error}</div>}
      <table className={styles.table}>
        <thead>
          <tr>
            <th data-col="text">Statement</th>
            <th data-col="elapsed">Elapsed</th>
            <th data-col="rows">Rows</th>
            <th data-col="reads">Reads</th>
            <th data-col="waits">Waits</th>
          </tr>
        </thead>
        <tbody>
          {tree.nodes.map((n) => (
            <Row key={n.id} n={n} tree={tree} onPick={onPick} pending={pending === n.id} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Row({
  n,
  tree,
  onPick,
  pending,
}: {
  n: StatementNode;
  tree: Tree;
  onPick: Props['onPick'];
  pending: boolean;
}) {
  const styles = useStyles2(getStyles);
  const pick = canPick(tree, n);
  const label = statementLabel(n);
  return (
    <tr
      className={cx(styles.row, n.id === tree.current && styles.current, pick && styles.pickable)}
      data-testid={`qr-statement-${n.id}`}
      data-current={n.id === tree.current ? 'true' : undefined}
      data-has-plan={n.hasPlan ? 'true' : undefined}
      data-depth={n.depth}
      aria-selected={n.id === tree.current}
      onClick={pick ? () => onPick(n.id) : undefined}
      title={rowTitle(n)}
    >
      <td className={styles.text} style={{ paddingLeft: 4 + n.depth * 14 }}>
        {label}
        {pending && ' …'}
      </td>
      <td data-col="elapsed">{ms(n.elapsedUs)}</td>
      <td data-col="rows">{count(n.rows)}</td>
      <td data-col="reads" title={`${count(n.logicalReads)} logical, ${count(n.physicalReads)} physical`}>
        {count(n.logicalReads)}
      </td>
      <td data-col="waits">{ms(n.waitUs)}</td>
    </tr>
  );
}

/** The row's hover text: the whole statement and every figure, so a cut text or a dropped column loses nothing. */
function rowTitle(n: StatementNode): string {
  const what = n.kind === 'batch' ? 'The batch: events between statements' : n.text;
  const reads = `${count(n.logicalReads)} logical, ${count(n.physicalReads)} physical`;
  return `${what}\nElapsed ${ms(n.elapsedUs)} · Rows ${count(n.rows)} · Reads ${reads} · Waits ${ms(n.waitUs)}`;
}

// The figures' columns, least wanted first, and the tab width under which each is dropped (its figure stays in the
// row's title): the statement keeps at least about 150 px.
const DROPPED: Array<[string, number]> = [
  ['waits', 460],
  ['rows', 380],
  ['reads', 300],
];

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({
    overflow: 'auto',
    height: '100%',
    fontSize: theme.typography.bodySmall.fontSize,
    // the columns follow the tab's width, not the window's
    containerType: 'inline-size',
  }),
  table: css({
    width: '100%',
    // fixed: the statement column takes what the figures leave and cuts its text, never the table wider
    tableLayout: 'fixed',
    borderCollapse: 'collapse',
    'th, td': { padding: theme.spacing(0.25, 0.5), textAlign: 'right', whiteSpace: 'nowrap' },
    'th:first-child': { textAlign: 'left' },
    'th[data-col="elapsed"], th[data-col="waits"]': { width: '9ch' },
    'th[data-col="rows"], th[data-col="reads"]': { width: '8ch' },
    ...Object.fromEntries(
      DROPPED.map(([col, px]) => [`@container (max-width: ${px}px)`, { [`[data-col="${col}"]`]: { display: 'none' } }])
    ),
  }),
  row: css({ borderTop: `1px solid ${theme.colors.border.weak}` }),
  pickable: css({ cursor: 'pointer', '&:hover': { background: theme.colors.action.hover } }),
  current: css({ background: theme.colors.action.selected }),
  text: css({
    textAlign: 'left !important' as 'left',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  error: css({ color: theme.colors.error.text, padding: theme.spacing(0.5) }),
});
