import React, { useMemo, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, PanelProps } from '@grafana/data';
import { Alert, Slider, useStyles2 } from '@grafana/ui';
import { lanesFromFrames, startedBy, timeSpan } from './replay/lanes';

export interface ReplayOptions {
  showSkipped: boolean;
}

/** Replays lanes with a playhead: each lane shows how many of its events have happened by then. */
export function ReplayPanel({ data, width, height, options }: PanelProps<ReplayOptions>) {
  const styles = useStyles2(getStyles);
  const { lanes, skipped } = useMemo(() => lanesFromFrames(data.series), [data.series]);
  const span = useMemo(() => timeSpan(lanes), [lanes]);
  const [playhead, setPlayhead] = useState<number | null>(null);

  if (!span) {
    return (
      <div style={{ width, height }} data-testid="qr-replay-empty">
        <Alert severity="info" title="Nothing to replay">
          No lane frames in the query result. Run a trace with the QueryReplay SQL Server data source.
        </Alert>
      </div>
    );
  }
  const at = playhead ?? span.to;
  return (
    <div className={styles.panel} style={{ width, height }} data-testid="qr-replay">
      <Slider
        inputId="qr-playhead-slider"
        min={0}
        max={span.to - span.from}
        step={0.001}
        value={at - span.from}
        onChange={(v) => setPlayhead(span.from + v)}
      />
      <div data-testid="qr-playhead">{(at - span.from).toFixed(3)} ms</div>
      {lanes.map((lane) => (
        <div key={lane.name} className={styles.lane} data-testid={`qr-lane-${lane.name}`}>
          <span className={styles.name}>{lane.name}</span>
          <span>
            {startedBy(lane, at)} / {lane.entries.length}
          </span>
        </div>
      ))}
      {options.showSkipped && skipped.length > 0 && (
        <div data-testid="qr-skipped">Not lanes: {skipped.join(', ')}</div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  panel: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(0.5), overflow: 'auto' }),
  lane: css({ display: 'flex', gap: theme.spacing(1) }),
  name: css({ minWidth: 80, color: theme.colors.text.secondary }),
});
