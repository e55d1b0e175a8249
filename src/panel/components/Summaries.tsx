import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { LaneData, WindowUs } from '../model/trace';
import { TableIORow, WaitStat, count, waitsByClass } from '../model/summary';
import { ReplayStore } from '../replay/store';
import { tableIOPatch, waitPatch } from '../replay/summarylinks';
import { useReplay } from './useStore';

interface Props {
  tableIO: TableIORow[] | null;
  waits: WaitStat[] | null;
  store: ReplayStore;
  waitLane: LaneData | undefined;
  bounds: WindowUs;
}

/** "dbo.Orders" → "Orders" (the full name is the cell's hover text); another schema stays. */
export function shortTable(table: string): string {
  return table.startsWith('dbo.') ? table.slice(4) : table;
}

const plan = (v: number | null) => (v === null ? '—' : count(v));

/**
 * Plan Explorer's Table I/O and Wait Stats, each row linked to the
 * timeline: a table filters the lanes to its operator, a wait type picks
 * out its waits and moves the playhead to the first.
 */
export function Summaries({ tableIO, waits, store, waitLane, bounds }: Props) {
  const styles = useStyles2(getStyles);
  const picked = useReplay(store, (s) => s.highlight?.source ?? null);
  return (
    <div className={styles.root} data-testid="qr-summaries">
      <h6 className={styles.h}>Table I/O</h6>
      {!tableIO ? (
        <div className={styles.note}>The frames carry no table_io frame (a datasource older than this panel).</div>
      ) : tableIO.length === 0 ? (
        <div className={styles.note}>The plan reads no table or index.</div>
      ) : (
        <table className={styles.table} data-testid="qr-table-io">
          <thead>
            <tr>
              <th title="dbo. left out; hover a name for it in full">Table / index</th>
              <th title="logical reads (plan): pages read from the buffer pool">Logical</th>
              <th title="physical reads (plan): pages read from disk">Physical</th>
              <th title="read-ahead reads (plan)">Ahead</th>
              <th title="scans (plan): ActualScans">Scans</th>
              <th title="page reads (trace): physical_page_read events tied to the object">Pages</th>
              <th title="locks (trace) on the object">Locks</th>
            </tr>
          </thead>
          <tbody>
            {tableIO.map((r) => (
              <tr
                key={r.object}
                className={cx(styles.row, picked === `table:${r.object}` && styles.picked)}
                onClick={() => store.set(tableIOPatch(r))}
                title={`${r.object}: click to show only operator ${r.nodeIds.join(', ')} on the timeline`}
                data-testid="qr-table-io-row"
              >
                <td
                  className={styles.name}
                  title={`${r.table}${r.index ? `, index ${r.index}` : ' (the table itself)'}`}
                >
                  <div>{shortTable(r.table)}</div>
                  <div className={styles.index}>{r.index || '(table)'}</div>
                </td>
                <td>{plan(r.logicalReads)}</td>
                <td>{plan(r.physicalReads)}</td>
                <td>{plan(r.readAheads)}</td>
                <td>{plan(r.scans)}</td>
                <td>{count(r.pageReads)}</td>
                <td>{count(r.locks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h6 className={styles.h}>Wait Stats</h6>
      {!waits ? (
        <div className={styles.note}>The frames carry no wait_stats frame (a datasource older than this panel).</div>
      ) : waits.length === 0 ? (
        <div className={styles.note}>No waits: the query never waited, or the waits event group was off.</div>
      ) : (
        <WaitTable waits={waits} store={store} waitLane={waitLane} bounds={bounds} picked={picked} />
      )}
    </div>
  );
}

function WaitTable({
  waits,
  store,
  waitLane,
  bounds,
  picked,
}: {
  waits: WaitStat[];
  store: ReplayStore;
  waitLane: LaneData | undefined;
  bounds: WindowUs;
  picked: string | null;
}) {
  const styles = useStyles2(getStyles);
  const total = waits.reduce((a, w) => a + w.waitUs, 0);
  const share = (us: number) => (total > 0 ? `${Math.round((100 * us) / total)}%` : '—');
  return (
    <table className={styles.table} data-testid="qr-wait-stats">
      <thead>
        <tr>
          <th>Category / wait type</th>
          <th>Waits</th>
          <th title="time waited, µs">Time (µs)</th>
          <th>Share</th>
        </tr>
      </thead>
      <tbody>
        {waitsByClass(waits).map((c) => (
          <React.Fragment key={c.waitClass}>
            <tr className={styles.group} data-testid="qr-wait-class">
              <td className={styles.name} title={`${c.waitClass}: ${c.types.join(', ')}`}>
                {c.waitClass}
              </td>
              <td>{count(c.waits)}</td>
              <td>{count(c.waitUs)}</td>
              <td>{share(c.waitUs)}</td>
            </tr>
            {waits
              .filter((w) => w.waitClass === c.waitClass)
              .map((w) => (
                <tr
                  key={w.waitType}
                  className={cx(styles.row, picked === `wait:${w.waitType}` && styles.picked)}
                  onClick={() => store.set(waitPatch(w, waitLane, store.get(), bounds))}
                  title={`${w.waitType}: click to pick out its waits on the timeline${
                    w.untimed ? `; ${count(w.untimed)} shorter than 1 ms, not timed` : ''
                  }`}
                  data-testid="qr-wait-type"
                >
                  <td className={cx(styles.name, styles.indent)} title={w.waitType}>
                    {w.waitType}
                  </td>
                  <td>{count(w.waits)}</td>
                  <td>{count(w.waitUs)}</td>
                  <td>{share(w.waitUs)}</td>
                </tr>
              ))}
          </React.Fragment>
        ))}
      </tbody>
    </table>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ height: '100%', overflow: 'auto', fontSize: theme.typography.bodySmall.fontSize }),
  h: css({ margin: theme.spacing(1, 0, 0.5), color: theme.colors.text.primary }),
  note: css({ color: theme.colors.text.secondary, padding: theme.spacing(0.5, 0) }),
  table: css({
    width: '100%',
    borderCollapse: 'collapse',
    'th, td': {
      padding: '2px 4px',
      textAlign: 'right',
      whiteSpace: 'nowrap',
      borderBottom: `1px solid ${theme.colors.border.weak}`,
    },
    'th:first-child, td:first-child': { textAlign: 'left' },
    th: { color: theme.colors.text.secondary, fontWeight: theme.typography.fontWeightMedium },
  }),
  name: css({ textAlign: 'left !important' as 'left' }),
  index: css({ color: theme.colors.text.secondary, fontSize: 11 }),
  indent: css({ paddingLeft: '18px !important' }),
  group: css({ fontWeight: theme.typography.fontWeightMedium, background: theme.colors.background.secondary }),
  row: css({ cursor: 'pointer', '&:hover': { background: theme.colors.action.hover } }),
  picked: css({ background: theme.colors.action.selected }),
});
