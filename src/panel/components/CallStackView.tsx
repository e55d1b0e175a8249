import React, { useMemo, useState } from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Badge, InlineSwitch, useStyles2 } from '@grafana/ui';
import { describeEntry } from '../replay/describe';
import { TimeUnit } from '../replay/scale';
import { eventStackLines, isInfrastructure, splitFrame, stackLines, stackTree } from '../replay/stacks';
import { ReplayStore } from '../replay/store';
import { EventLaneName } from '../model/lanes';
import { EventStackFrame, LaneData, ReplayTrace, WindowUs, stackIdOf } from '../model/trace';
import { FieldList } from './FieldList';
import { useReplay } from './useStore';

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  unit: TimeUnit;
  /** The lanes of a window: a detail selection indexes those of the current window. */
  lanesFor: (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;
}

/**
 * The selected event (its fields, operator, match rule and confidence) and
 * the call stacks: module and category badges on each frame, infrastructure
 * frames collapsed until asked for.
 */
export function CallStackView({ trace, store, unit, lanesFor }: Props) {
  const styles = useStyles2(getStyles);
  const selected = useReplay(store, (s) => s.selected);
  const [showInfra, setShowInfra] = useState(false);
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const roots = useMemo(() => (trace.callstacks ? stackTree(trace.callstacks) : []), [trace.callstacks]);
  const lines = useMemo(() => stackLines(roots, showInfra, expanded), [roots, showInfra, expanded]);
  // subscribed to the window only while a detail entry is selected: the lane it indexes depends on it
  const detailWindow = useReplay(store, (s) => (selected?.detail ? s.window : null));
  const lane = !selected
    ? undefined
    : detailWindow
      ? lanesFor(detailWindow)[selected.lane]
      : trace.lanes[selected.lane];
  const desc = selected && lane && selected.index < lane.n ? describeEntry(trace, lane, selected.index, unit) : null;
  const stackId = selected && lane ? stackIdOf(lane, selected.index) : null;
  const own = stackId !== null ? trace.stacks?.get(stackId) : undefined;
  const [ownExpanded, setOwnExpanded] = useState<Set<string>>(new Set());
  const ownLines = useMemo(
    () => (own ? eventStackLines(own, showInfra, ownExpanded) : []),
    [own, showInfra, ownExpanded]
  );

  return (
    <div className={styles.wrap} data-testid="qr-stack">
      <section className={styles.selected} data-testid="qr-selected">
        {desc ? (
          <>
            <div className={styles.title}>{desc.title}</div>
            <FieldList rows={desc.rows} />
          </>
        ) : (
          <div className={styles.note}>Click an event on the timeline to see its fields here.</div>
        )}
      </section>
      <section>
        <div className={styles.bar}>
          <span className={styles.title}>Call stacks</span>
          {trace.callstacks && (
            <>
              <InlineSwitch
                id="qr-stack-infra"
                label="Infrastructure frames"
                showLabel
                transparent
                value={showInfra}
                onChange={(e) => setShowInfra(e.currentTarget.checked)}
              />
            </>
          )}
        </div>
        {!trace.callstacks ? (
          <div className={styles.note}>
            This trace has no call stacks. Turn on “Call stacks” in the query options to capture them (it makes every
            storage event larger).
          </div>
        ) : (
          <>
            {own ? (
              <section data-testid="qr-event-stack">
                <div className={styles.note}>
                  Call stack of the selected event, innermost frame first ({own.length} frames
                  {own.some((f) => f.unresolved) ? '; frames without symbols keep module+RVA' : ''}).
                </div>
                <ul className={styles.tree} role="list">
                  {ownLines.map((l) =>
                    l.kind === 'collapsed' ? (
                      <li key={l.id} className={styles.collapsed}>
                        <button
                          type="button"
                          className={styles.expand}
                          title={l.frames.map((f) => f.label).join('\n')}
                          onClick={() => setOwnExpanded(new Set([...ownExpanded, l.id]))}
                        >
                          ⋯ {l.frames.length} infrastructure frame{l.frames.length > 1 ? 's' : ''}
                        </button>
                      </li>
                    ) : (
                      <EventFrame key={l.frame.frame} frame={l.frame} />
                    )
                  )}
                </ul>
              </section>
            ) : (
              selected && (
                <div className={styles.note}>
                  {stackId === null
                    ? 'The selected event carries no call stack (binned rows, I/O events and events traced without call stacks have none).'
                    : `Stack ${stackId} is not in this response.`}
                </div>
              )
            )}
            <div className={styles.note}>
              All stacks, merged over {trace.callstacks[0]?.value.toLocaleString('en-US') ?? 0} captured events.
            </div>
            <ul className={styles.tree} role="tree">
              {lines.map((l) =>
                l.kind === 'collapsed' ? (
                  <li key={l.id} style={{ paddingLeft: l.depth * 12 }} className={styles.collapsed}>
                    <button
                      type="button"
                      className={styles.expand}
                      title={l.labels.join('\n')}
                      onClick={() => setExpanded(new Set([...expanded, l.id]))}
                    >
                      ⋯ {l.count} infrastructure frame{l.count > 1 ? 's' : ''}
                    </button>
                  </li>
                ) : (
                  <li
                    key={l.node.index}
                    role="treeitem"
                    style={{ paddingLeft: l.depth * 12 }}
                    className={cx(styles.frame, isInfrastructure(l.node.row) && styles.infra)}
                  >
                    <FrameLabel label={l.node.row.label} />
                    {l.node.row.moduleBadge && (
                      <Badge text={l.node.row.moduleBadge} color="blue" className={styles.badge} />
                    )}
                    {l.node.row.badge && <Badge text={l.node.row.badge} color="purple" className={styles.badge} />}
                    <span className={styles.count}>{l.node.row.value.toLocaleString('en-US')}</span>
                  </li>
                )
              )}
            </ul>
          </>
        )}
      </section>
    </div>
  );
}

/** One frame of the selected event's stack with its Module and Category badges. */
function EventFrame({ frame }: { frame: EventStackFrame }) {
  const styles = useStyles2(getStyles);
  return (
    <li
      data-testid="qr-stack-frame"
      className={cx(styles.frame, frame.infrastructure && styles.infra)}
      title={frame.unresolved || undefined}
    >
      <FrameLabel label={frame.label} />
      {frame.moduleBadge && <Badge text={frame.moduleBadge} color="blue" className={styles.badge} />}
      {frame.category && <Badge text={frame.category} color="purple" className={styles.badge} />}
      {frame.operatorBadge && <Badge text={frame.operatorBadge} color="orange" className={styles.badge} />}
    </li>
  );
}

function FrameLabel({ label }: { label: string }) {
  const styles = useStyles2(getStyles);
  const f = splitFrame(label);
  return (
    <span className={styles.label}>
      {f.module && <span className={styles.module}>{f.module}!</span>}
      {f.symbol}
      {f.offset && <span className={styles.module}>+{f.offset}</span>}
    </span>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({
    overflow: 'auto',
    height: '100%',
    fontSize: theme.typography.bodySmall.fontSize,
    display: 'flex',
    flexDirection: 'column',
    gap: 8,
  }),
  selected: css({ borderBottom: `1px solid ${theme.colors.border.weak}`, paddingBottom: 4 }),
  title: css({ fontWeight: theme.typography.fontWeightMedium }),
  note: css({ color: theme.colors.text.secondary }),
  bar: css({ display: 'flex', alignItems: 'center', gap: 8 }),
  tree: css({ listStyle: 'none', margin: 0, padding: 0, fontFamily: theme.typography.fontFamilyMonospace }),
  frame: css({ display: 'flex', alignItems: 'center', gap: 4, whiteSpace: 'nowrap' }),
  infra: css({ color: theme.colors.text.secondary }),
  collapsed: css({ whiteSpace: 'nowrap' }),
  expand: css({
    background: 'none',
    border: 'none',
    color: theme.colors.text.link,
    cursor: 'pointer',
    padding: 0,
    font: 'inherit',
  }),
  label: css({ overflow: 'hidden', textOverflow: 'ellipsis' }),
  module: css({ color: theme.colors.text.secondary }),
  badge: css({ fontSize: 10, padding: '0 4px', height: 16 }),
  count: css({ color: theme.colors.text.secondary, marginLeft: 'auto', paddingLeft: 8 }),
});
