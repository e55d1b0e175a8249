import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Icon, IconButton, useStyles2 } from '@grafana/ui';
import { focusedFinding } from '../findings/focus';
import { FindingsReport } from '../findings/model';
import { ReplayStore } from '../replay/store';
import { SEVERITY_ICON, getSeverityStyles } from './FindingsList';
import { useReplay } from './useStore';

export const STRIP_H = 24;

interface Props {
  report: FindingsReport;
  store: ReplayStore;
  width: number;
  onFocus: (i: number) => void;
  onStep: (dir: 1 | -1) => void;
  /** Opens the findings list (the linked view tab, or the view in a small panel). */
  onOpenList: () => void;
}

/**
 * One line above the timeline: the selected finding (or the most severe
 * one) with its evidence stepper and the count that opens the list — so a
 * 6×8 panel shows what the trace means without giving up the timeline.
 */
export function FindingsStrip({ report, store, width, onFocus, onStep, onOpenList }: Props) {
  const styles = useStyles2(getStyles);
  const severity = useStyles2(getSeverityStyles);
  const highlight = useReplay(store, (s) => s.highlight);
  const focused = focusedFinding(highlight);
  const shown = focused >= 0 ? focused : 0;
  const f = report.findings[shown];
  if (!f) {
    return null;
  }
  const n = report.findings.length;
  const current = focused >= 0 ? (highlight?.current ?? -1) : -1;
  const compact = width < 560;
  return (
    <div className={styles.strip} style={{ height: STRIP_H }} data-testid="qr-findings-strip">
      <button
        type="button"
        className={styles.title}
        onClick={() => onFocus(shown)}
        title={`${f.title}\n\nClick to select its operators and zoom to its evidence.`}
        data-testid="qr-strip-finding"
      >
        <Icon name={SEVERITY_ICON[f.severity]} className={severity[f.severity]} aria-label={f.severity} />
        <span className={styles.text}>{f.title}</span>
      </button>
      {focused >= 0 && f.evidence.length > 0 && (
        <span className={styles.stepper}>
          <IconButton
            name="angle-left"
            size="sm"
            tooltip="Previous evidence event ([)"
            onClick={() => onStep(-1)}
            data-testid="qr-strip-evidence-prev"
          />
          <span className={styles.pos} data-testid="qr-strip-evidence-pos">
            {current + 1}/{f.evidence.length}
          </span>
          <IconButton
            name="angle-right"
            size="sm"
            tooltip="Next evidence event (])"
            onClick={() => onStep(1)}
            data-testid="qr-strip-evidence-next"
          />
        </span>
      )}
      <button
        type="button"
        className={styles.count}
        onClick={onOpenList}
        title="All findings"
        data-testid="qr-strip-open"
      >
        <Icon name="list-ul" size="sm" />
        {compact ? n : `${n} finding${n === 1 ? '' : 's'}`}
      </button>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  strip: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    flex: 'none',
    overflow: 'hidden',
    borderTop: `1px solid ${theme.colors.border.weak}`,
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    background: theme.colors.background.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    padding: theme.spacing(0, 0.5),
  }),
  title: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    minWidth: 0,
    flex: 1,
    background: 'none',
    border: 'none',
    padding: 0,
    color: theme.colors.text.primary,
    cursor: 'pointer',
    textAlign: 'left',
    '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` },
  }),
  text: css({ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }),
  stepper: css({ display: 'flex', alignItems: 'center', gap: 2, flex: 'none' }),
  pos: css({ fontVariantNumeric: 'tabular-nums', color: theme.colors.text.secondary }),
  count: css({
    display: 'flex',
    alignItems: 'center',
    gap: 4,
    flex: 'none',
    background: 'none',
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.pill,
    color: theme.colors.text.secondary,
    padding: '0 8px',
    height: 18,
    cursor: 'pointer',
    whiteSpace: 'nowrap',
  }),
});
