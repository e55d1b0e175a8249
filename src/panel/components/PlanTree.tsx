import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { LaneData, ReplayTrace } from '../model/trace';
import { describeOperator } from '../replay/describe';
import { readsSoFar, rowsSoFar, stateAt } from '../replay/phases';
import { TimeUnit } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { Palette } from '../render/palette';
import { FieldList } from './FieldList';
import { useReplay } from './useStore';

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  palette: Palette;
  /** The read lane to count reads from (zoomed-in detail when it is finer). */
  reads: LaneData | undefined;
  unit: TimeUnit;
}

const PHASE_LABEL: Record<string, string> = {
  consume: 'consuming',
  build: 'building',
  probe: 'probing',
  emit: 'emitting',
};

/**
 * The plan as a tree that follows the playhead: active operators are
 * highlighted (a solid edge while rows flow out, a dashed one while an
 * operator only takes rows in), with rows and reads so far. Clicking an
 * operator filters every lane to its events.
 */
export function PlanTree({ trace, store, palette, reads, unit }: Props) {
  const styles = useStyles2(getStyles);
  const t = useReplay(store, (s) => s.playheadUs);
  const filter = useReplay(store, (s) => s.filterNode);
  const selected = useReplay(store, (s) => s.selectedNode);
  if (trace.operators.length === 0) {
    return <div className={styles.empty}>The frames carry no plan operators.</div>;
  }
  const detailOp = trace.byNode.get(selected ?? filter ?? trace.operators[0].nodeId) ?? trace.operators[0];
  const details = describeOperator(detailOp, unit);
  return (
    <div className={styles.wrap}>
      <div className={styles.list} role="tree" aria-label="Plan operators" data-testid="qr-plan-tree">
        {trace.operators.map((op) => {
          const st = stateAt(op, t);
          const rows = rowsSoFar(op, t);
          const r = readsSoFar(op, reads, t);
          const color = palette.operator(op.nodeId);
          return (
            <div
              key={op.nodeId}
              role="treeitem"
              aria-level={op.depth + 1}
              aria-selected={selected === op.nodeId}
              data-testid={`qr-plan-node-${op.nodeId}`}
              data-status={st.status}
              data-emitting={st.emitting ? 'true' : 'false'}
              className={cx(
                styles.row,
                st.status === 'active' && (st.emitting ? styles.emitting : styles.consuming),
                st.status === 'not-executed' && styles.notExecuted,
                (filter === op.nodeId || selected === op.nodeId) && styles.selected
              )}
              style={{
                paddingLeft: 4 + op.depth * 14,
                borderLeftColor: st.status === 'active' ? color : 'transparent',
              }}
              onClick={() => {
                const next = filter === op.nodeId ? null : op.nodeId;
                store.set({ filterNode: next, selectedNode: next });
              }}
              title={[`${op.nodeId} ${op.name}`, op.object, op.logicalOp].filter(Boolean).join(' · ')}
            >
              <span className={styles.swatch} style={{ background: color }} />
              <span className={styles.name}>
                <b>{op.nodeId}</b> {op.name}
                {op.object && <span className={styles.object}> {shortObject(op.object)}</span>}
              </span>
              <span className={styles.badge} data-testid={`qr-plan-phase-${op.nodeId}`}>
                {st.status === 'not-executed'
                  ? 'not executed'
                  : st.status === 'active'
                    ? (PHASE_LABEL[st.phase?.kind ?? ''] ?? (st.emitting ? 'emitting' : 'consuming'))
                    : st.status === 'done'
                      ? 'done'
                      : ''}
              </span>
              <span className={styles.stat} title="rows so far (spread over the emitting span) / actual rows">
                {rows === null ? '' : `≈${compact(rows)}/${compact(op.actualRows ?? 0)} rows`}
              </span>
              <span
                className={styles.stat}
                title="page reads in the trace (physical_page_read events) tied to the operator so far / in total"
                data-testid={`qr-plan-reads-${op.nodeId}`}
              >
                {compact(r)}/{compact(op.reads)} page reads
              </span>
            </div>
          );
        })}
      </div>
      <section className={styles.details} data-testid="qr-operator-details" aria-label="Operator details">
        <div className={styles.detailsTitle}>{details.title}</div>
        <FieldList rows={details.rows} />
      </section>
    </div>
  );
}

/** [dbo].[Orders].[PK_Orders] → Orders.PK_Orders */
export function shortObject(o: string): string {
  const parts = o.replace(/[[\]]/g, '').split('.');
  return parts.length >= 3 ? parts.slice(-2).join('.') : parts.join('.');
}

export function compact(n: number): string {
  if (n >= 1e6) {
    return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  }
  if (n >= 1e4) {
    return `${(n / 1e3).toFixed(n >= 1e5 ? 0 : 1)}k`;
  }
  return n.toLocaleString('en-US');
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ display: 'flex', flexDirection: 'column', height: '100%', gap: theme.spacing(1), overflow: 'hidden' }),
  list: css({
    display: 'flex',
    flexDirection: 'column',
    fontSize: theme.typography.bodySmall.fontSize,
    overflow: 'auto',
    flex: '0 1 auto',
    minHeight: 40,
  }),
  details: css({
    borderTop: `1px solid ${theme.colors.border.weak}`,
    paddingTop: theme.spacing(0.5),
    fontSize: theme.typography.bodySmall.fontSize,
    overflow: 'auto',
    flex: '1 1 0',
  }),
  detailsTitle: css({ fontWeight: theme.typography.fontWeightMedium, marginBottom: 2 }),
  empty: css({ padding: theme.spacing(1), color: theme.colors.text.secondary }),
  row: css({
    display: 'grid',
    gridTemplateColumns: 'auto minmax(80px, 1fr) auto auto auto',
    alignItems: 'center',
    gap: theme.spacing(0.75),
    padding: '1px 4px',
    borderLeft: '3px solid transparent',
    cursor: 'pointer',
    whiteSpace: 'nowrap',
    '&:hover': { background: theme.colors.action.hover },
  }),
  emitting: css({ background: theme.colors.action.selected, fontWeight: theme.typography.fontWeightMedium }),
  consuming: css({ background: theme.colors.action.hover, borderLeftStyle: 'dashed' }),
  notExecuted: css({ color: theme.colors.text.disabled, fontStyle: 'italic' }),
  selected: css({ outline: `1px solid ${theme.colors.primary.border}` }),
  swatch: css({ width: 8, height: 8, borderRadius: 2, display: 'inline-block' }),
  // names wrap rather than being cut: Customers and Orders must be told apart without a click
  name: css({ whiteSpace: 'normal', overflowWrap: 'anywhere', minWidth: 0 }),
  object: css({ color: theme.colors.text.secondary }),
  badge: css({ color: theme.colors.text.secondary, minWidth: 62 }),
  stat: css({ color: theme.colors.text.secondary, textAlign: 'right', fontVariantNumeric: 'tabular-nums' }),
});
