import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { LaneData, ReplayTrace } from '../model/trace';
import { activeAt } from '../replay/active';
import { operatorName } from '../replay/describe';
import { countAll } from '../replay/nodes';
import { TimeUnit, formatDuration } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { useReplay } from './useStore';

interface Props {
  trace: ReplayTrace;
  lane: LaneData | undefined;
  store: ReplayStore;
  unit: TimeUnit;
}

const LIMIT = 200;

/** Locks held at the playhead, with the rows their key hashes resolved to. */
export function LockList({ trace, lane, store }: Props) {
  const styles = useStyles2(getStyles);
  const t = useReplay(store, (s) => s.playheadUs);
  const filter = useReplay(store, (s) => s.filterNode);
  if (!lane) {
    return <div className={styles.note}>The frames carry no lock lane.</div>;
  }
  if (!lane.traced) {
    return <div className={styles.note}>Locks were not traced (the locks event group was off).</div>;
  }
  if (lane.binned) {
    return <div className={styles.note}>Too many locks to list at this zoom level; zoom in to see each lock.</div>;
  }
  const col = (name: string) => lane.frame.fields.find((f) => f.name === name);
  const F = {
    mode: col('state'),
    type: col('resourceType'),
    res: col('resource'),
    obj: col('object'),
    row: col('row'),
    held: col('heldToEnd'),
  };
  const active = activeAt(lane, t, LIMIT * 4).filter((i) => filter === null || lane.node[i] === filter);
  const acquired = countAll(lane, t);
  return (
    <div className={styles.wrap} data-testid="qr-locks">
      <div className={styles.summary} data-testid="qr-locks-summary">
        {active.length} held now{active.length > LIMIT ? ` (first ${LIMIT} shown)` : ''} ·{' '}
        {acquired.toLocaleString('en-US')} acquired so far
      </div>
      {active.length > 0 && (
        <table className={styles.table}>
          <thead>
            <tr>
              <th>mode</th>
              <th>resource</th>
              <th>object</th>
              <th>row</th>
              <th>held</th>
              <th>operator</th>
            </tr>
          </thead>
          <tbody>
            {active.slice(0, LIMIT).map((i) => {
              const r = lane.row[i];
              const v = (f: typeof F.mode) => (f?.values[r] ?? '') as string;
              return (
                <tr key={i}>
                  <td className={styles.mode}>{v(F.mode)}</td>
                  <td title={v(F.res)}>
                    {v(F.type)} {v(F.res)}
                  </td>
                  <td>{v(F.obj)}</td>
                  <td className={styles.row}>{v(F.row) || '—'}</td>
                  <td>
                    {formatDuration(t - lane.start[i])}
                    {F.held?.values[r] === true ? ' · to end' : ''}
                  </td>
                  <td>{operatorName(trace, lane.node[i] < 0 ? null : lane.node[i])}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ overflow: 'auto', height: '100%', fontSize: theme.typography.bodySmall.fontSize }),
  note: css({
    color: theme.colors.text.secondary,
    padding: theme.spacing(1),
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  summary: css({ color: theme.colors.text.secondary, marginBottom: 4 }),
  table: css({
    borderCollapse: 'collapse',
    width: '100%',
    th: { textAlign: 'left', color: theme.colors.text.secondary, fontWeight: 500, padding: '0 6px 2px 0' },
    td: { padding: '1px 6px 1px 0', whiteSpace: 'nowrap', maxWidth: 220, overflow: 'hidden', textOverflow: 'ellipsis' },
  }),
  mode: css({ fontWeight: theme.typography.fontWeightBold }),
  row: css({ fontFamily: theme.typography.fontFamilyMonospace }),
});
