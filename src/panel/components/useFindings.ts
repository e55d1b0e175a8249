import { useCallback, useMemo, useRef } from 'react';
import { DataFrame } from '@grafana/data';
import { STRIP_H } from './FindingsStrip';
import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { ReplayStore } from '../replay/store';
import { FocusContext, focusFinding, stepFindingEvidence } from '../findings/focus';
import { FindingsReport, findingsFromFrames } from '../findings/model';

type LanesFor = (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;

export interface FindingsHandle {
  /** The findings frame read, or null when the response has none. */
  report: FindingsReport | null;
  /** Height of the findings strip above the timeline (0 without findings). */
  stripH: number;
  focus: (i: number) => void;
  step: (dir: 1 | -1) => void;
  /** Hands over the lanes drawn for a window (known only once the timeline's width is), to resolve evidence in. */
  setLanes: (lanesFor: LanesFor) => void;
}

/** The replay's findings: read from the frames, and what selecting and stepping do. */
export function useFindings(
  series: DataFrame[],
  store: ReplayStore,
  trace: ReplayTrace,
  bounds: WindowUs
): FindingsHandle {
  const report = useMemo(() => findingsFromFrames(series), [series]);
  const lanes = useRef<LanesFor>(() => trace.lanes);
  const ctx = useCallback(
    (): FocusContext => ({ store, trace, bounds, lanesFor: (w) => lanes.current(w) }),
    [store, trace, bounds]
  );
  const focus = useCallback((i: number) => report && focusFinding(ctx(), report.findings, i), [report, ctx]);
  const step = useCallback(
    (dir: 1 | -1) => {
      if (report) {
        stepFindingEvidence(ctx(), report.findings, dir);
      }
    },
    [report, ctx]
  );
  return {
    report,
    stripH: report && report.findings.length > 0 ? STRIP_H : 0,
    focus,
    step,
    setLanes: (lanesFor) => {
      lanes.current = lanesFor;
    },
  };
}
