import { useCallback, useMemo, useRef, useState } from 'react';
import { DataFrame } from '@grafana/data';
import { DataSourceRef } from '@grafana/schema';
import { StatementBand, StatementTree, statementBands, statementsFromFrames } from '../model/statements';

/** Fetches one statement's frames (detailSource's fetchStatement; injected so tests need no backend). */
export type StatementFetch = (ds: DataSourceRef, traceId: string, statement: number) => Promise<DataFrame[]>;

export interface StatementPick {
  /** The frames to replay: the picked statement's, else the panel's own. */
  series: DataFrame[];
  tree: StatementTree | null;
  bands: StatementBand[];
  /** The picked statement whose frames are replayed; undefined: the panel's own frames. */
  picked?: number;
  pick: (id: number) => void;
  pending: number | null;
  error: string | null;
}

/**
 * The statement the replay draws. The panel's frames draw the first
 * statement with a plan; picking another asks the datasource for that
 * statement's frames (a `bundle` query with `statement`) and replays them.
 * New panel data drops the pick.
 */
export function useStatements(
  series: DataFrame[],
  ds: DataSourceRef | null,
  traceId: string,
  fetch: StatementFetch
): StatementPick {
  const [picked, setPicked] = useState<{ from: DataFrame[]; series: DataFrame[] } | null>(null);
  // keyed by the panel's frames: new data drops a pending pick and its error
  const [status, setStatus] = useState<{ from: DataFrame[]; pending: number | null; error: string | null } | null>(
    null
  );
  const latest = useRef(0);
  const pending = status?.from === series ? status.pending : null;
  const error = status?.from === series ? status.error : null;
  const current = picked && picked.from === series ? picked.series : series;
  const tree = useMemo(() => statementsFromFrames(current) ?? statementsFromFrames(series), [current, series]);
  const bands = useMemo(() => (tree ? statementBands(tree) : []), [tree]);
  const pick = useCallback(
    (id: number) => {
      if (!ds || !traceId) {
        setStatus({ from: series, pending: null, error: 'No QueryReplay datasource to ask for the statement.' });
        return;
      }
      const n = ++latest.current;
      setStatus({ from: series, pending: id, error: null });
      fetch(ds, traceId, id).then(
        (frames) => {
          if (n === latest.current) {
            setPicked({ from: series, series: frames });
            setStatus(null);
          }
        },
        (e: unknown) => {
          if (n === latest.current) {
            setStatus({ from: series, pending: null, error: e instanceof Error ? e.message : String(e) });
          }
        }
      );
    },
    [ds, traceId, fetch, series]
  );
  const pickedId = current !== series ? tree?.current : undefined;
  return { series: current, tree, bands, picked: pickedId, pick, pending, error };
}
