import React from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Badge, Icon, IconButton, IconName, TextLink, useStyles2 } from '@grafana/ui';
import { focusedFinding } from '../findings/focus';
import { Finding, FindingsReport, Severity, numberText, operatorLabel } from '../findings/model';
import { ReplayStore } from '../replay/store';
import { useReplay } from './useStore';

interface Props {
  /** Null when the response has no findings frame. */
  report: FindingsReport | null;
  store: ReplayStore;
  onFocus: (i: number) => void;
  onStep: (dir: 1 | -1) => void;
}

export const SEVERITY_ICON: Record<Severity, IconName> = {
  critical: 'exclamation-circle',
  warning: 'exclamation-triangle',
  info: 'info-circle',
};

/**
 * The findings of the trace as a list: severity, the sentence with the
 * numbers, confidence (and why it is lowered), the operators and the
 * measured figures; the selected finding opens to its detail, the hint with
 * its documentation link, and the evidence stepper.
 */
export function FindingsList({ report, store, onFocus, onStep }: Props) {
  const styles = useStyles2(getStyles);
  const highlight = useReplay(store, (s) => s.highlight);
  const focused = focusedFinding(highlight);
  if (!report) {
    return (
      <div className={styles.empty} data-testid="qr-findings">
        This response has no findings frame: the query left out the findings frame group, or the trace has no timeline.
      </div>
    );
  }
  if (report.findings.length === 0) {
    return (
      <div className={styles.empty} data-testid="qr-findings">
        <Icon name="check-circle" /> No findings: none of the rules saw a problem in this trace.
        {report.notes.map((n) => (
          <div key={n} className={styles.note}>
            {n}
          </div>
        ))}
      </div>
    );
  }
  return (
    <div className={styles.wrap} data-testid="qr-findings" role="list" aria-label="Findings">
      {report.findings.map((f, i) => (
        <FindingItem
          key={`${f.rule}-${i}`}
          finding={f}
          index={i}
          focused={focused === i}
          current={focused === i ? (highlight?.current ?? -1) : -1}
          onFocus={onFocus}
          onStep={onStep}
        />
      ))}
      {report.notes.map((n) => (
        <div key={n} className={styles.note}>
          <Icon name="info-circle" size="sm" /> {n}
        </div>
      ))}
    </div>
  );
}

interface ItemProps {
  finding: Finding;
  index: number;
  focused: boolean;
  current: number;
  onFocus: (i: number) => void;
  onStep: (dir: 1 | -1) => void;
}

function FindingItem({ finding: f, index, focused, current, onFocus, onStep }: ItemProps) {
  const styles = useStyles2(getStyles);
  const sevClass = useStyles2(getSeverityStyles)[f.severity];
  return (
    <div
      role="listitem"
      className={cx(styles.item, focused && styles.focused)}
      data-testid={`qr-finding-${index}`}
      data-rule={f.rule}
      data-focused={focused ? 'true' : 'false'}
    >
      <button
        type="button"
        className={styles.head}
        onClick={() => onFocus(index)}
        title={f.evidence.length ? 'Select its operators and zoom to its evidence' : 'Select its operators'}
        data-testid={`qr-finding-title-${index}`}
      >
        <Icon name={SEVERITY_ICON[f.severity]} className={cx(sevClass, styles.icon)} aria-label={f.severity} />
        <span className={styles.title}>{f.title}</span>
      </button>
      <div className={styles.meta}>
        {f.confidence !== 'high' && (
          <Badge
            color={f.confidence === 'low' ? 'orange' : 'blue'}
            text={`${f.confidence} confidence`}
            tooltip={f.confidenceReasons.join(' ') || undefined}
            data-testid={`qr-finding-confidence-${index}`}
          />
        )}
        {f.operators.map((o) => (
          <span key={o.nodeId} className={styles.op} title={`node ${o.nodeId}`}>
            {o.nodeId} {operatorLabel(o)}
          </span>
        ))}
      </div>
      {f.numbers.length > 0 && (
        <div className={styles.numbers} data-testid={`qr-finding-numbers-${index}`}>
          {f.numbers.map((n) => {
            const t = numberText(n);
            return (
              <span key={n.name} title={`from the ${n.source === 'run' ? "tracer's record" : n.source}`}>
                {t.label} <strong>{t.value}</strong>
              </span>
            );
          })}
        </div>
      )}
      {focused && (
        <div className={styles.body}>
          {f.confidence !== 'high' && f.confidenceReasons.length > 0 && (
            <div className={styles.why}>
              Confidence is {f.confidence}: {f.confidenceReasons.join('; ')}.
            </div>
          )}
          {f.detail && <div>{f.detail}</div>}
          {f.hint && (
            <div className={styles.hint}>
              <strong>What to do:</strong> {f.hint}{' '}
              {f.reference && (
                <TextLink href={f.reference} external inline variant="bodySmall">
                  Documentation
                </TextLink>
              )}
            </div>
          )}
          <EvidenceStepper finding={f} current={current} onStep={onStep} />
        </div>
      )}
    </div>
  );
}

/** "Evidence 3 of 20 (152 in all)" with previous/next; or why there is nothing to step through. */
export function EvidenceStepper(props: { finding: Finding; current: number; onStep: (dir: 1 | -1) => void }) {
  const styles = useStyles2(getStyles);
  const { finding: f, current } = props;
  if (f.evidence.length === 0) {
    return (
      <div className={styles.stepper} data-testid="qr-evidence-none">
        No evidence events{f.operators.length ? ': its operators are selected' : ''}.
      </div>
    );
  }
  const more = f.evidenceTotal > f.evidence.length ? ` (${f.evidenceTotal.toLocaleString('en-US')} in all)` : '';
  return (
    <div className={styles.stepper}>
      <IconButton
        name="angle-left"
        tooltip="Previous evidence event ([)"
        onClick={() => props.onStep(-1)}
        disabled={current <= 0}
        data-testid="qr-evidence-prev"
      />
      <span data-testid="qr-evidence-pos">
        evidence {current >= 0 ? current + 1 : '–'} of {f.evidence.length.toLocaleString('en-US')}
        {more}
      </span>
      <IconButton
        name="angle-right"
        tooltip="Next evidence event (])"
        onClick={() => props.onStep(1)}
        disabled={current >= f.evidence.length - 1}
        data-testid="qr-evidence-next"
      />
    </div>
  );
}

/** Severity colours from the theme, for the severity icons. */
export const getSeverityStyles = (theme: GrafanaTheme2): Record<Severity, string> => ({
  critical: css({ color: theme.colors.error.text, flex: 'none' }),
  warning: css({ color: theme.colors.warning.text, flex: 'none' }),
  info: css({ color: theme.colors.info.text, flex: 'none' }),
});

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({
    overflow: 'auto',
    height: '100%',
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(0.5),
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  empty: css({
    color: theme.colors.text.secondary,
    padding: theme.spacing(1),
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  note: css({ color: theme.colors.text.secondary, marginTop: theme.spacing(0.5) }),
  item: css({
    borderLeft: `3px solid transparent`,
    padding: theme.spacing(0.5, 0.5, 0.5, 0.75),
    borderRadius: theme.shape.radius.default,
    background: theme.colors.background.secondary,
  }),
  focused: css({ borderLeftColor: theme.colors.primary.main, background: theme.colors.action.selected }),
  head: css({
    display: 'flex',
    alignItems: 'flex-start',
    gap: theme.spacing(0.75),
    width: '100%',
    textAlign: 'left',
    background: 'none',
    border: 'none',
    padding: 0,
    color: theme.colors.text.primary,
    cursor: 'pointer',
    fontSize: theme.typography.body.fontSize,
    '&:focus-visible': { outline: `2px solid ${theme.colors.primary.main}` },
  }),
  title: css({ fontWeight: theme.typography.fontWeightMedium, lineHeight: 1.35 }),
  icon: css({ marginTop: 2 }),
  meta: css({
    display: 'flex',
    flexWrap: 'wrap',
    gap: theme.spacing(0.5),
    alignItems: 'center',
    marginTop: theme.spacing(0.25),
    paddingLeft: 22,
    '&:empty': { display: 'none' },
  }),
  op: css({
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.pill,
    padding: '0 6px',
    whiteSpace: 'nowrap',
    color: theme.colors.text.secondary,
  }),
  numbers: css({
    display: 'flex',
    flexWrap: 'wrap',
    columnGap: theme.spacing(1.5),
    color: theme.colors.text.secondary,
    paddingLeft: 22,
    marginTop: theme.spacing(0.25),
    strong: { color: theme.colors.text.primary, fontWeight: theme.typography.fontWeightMedium },
  }),
  body: css({
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(0.5),
    paddingLeft: 22,
    marginTop: theme.spacing(0.5),
    color: theme.colors.text.primary,
  }),
  why: css({ color: theme.colors.warning.text }),
  hint: css({ color: theme.colors.text.secondary, strong: { color: theme.colors.text.primary } }),
  stepper: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(0.5), color: theme.colors.text.secondary }),
});
