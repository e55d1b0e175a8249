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
            <th>Statement</th>
            <th>Elapsed</th>
            <th>Rows</th>
            <th>Reads</th>
            <th>Waits</th>
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
      title={n.kind === 'batch' ? 'The batch: events between statements' : n.text}
    >
      <td className={styles.text} style={{ paddingLeft: 4 + n.depth * 14 }}>
        {label}
        {pending && ' …'}
      </td>
      <td>{ms(n.elapsedUs)}</td>
      <td>{count(n.rows)}</td>
      <td title={`${count(n.logicalReads)} logical, ${count(n.physicalReads)} physical`}>{count(n.logicalReads)}</td>
      <td>{ms(n.waitUs)}</td>
    </tr>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ overflow: 'auto', height: '100%', fontSize: theme.typography.bodySmall.fontSize }),
  table: css({
    width: '100%',
    borderCollapse: 'collapse',
    'th, td': { padding: theme.spacing(0.25, 0.5), textAlign: 'right', whiteSpace: 'nowrap' },
    'th:first-child': { textAlign: 'left' },
  }),
  row: css({ borderTop: `1px solid ${theme.colors.border.weak}` }),
  pickable: css({ cursor: 'pointer', '&:hover': { background: theme.colors.action.hover } }),
  current: css({ background: theme.colors.action.selected }),
  text: css({
    textAlign: 'left !important' as 'left',
    maxWidth: 360,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  error: css({ color: theme.colors.error.text, padding: theme.spacing(0.5) }),
});
