import { LaneData, Operator, Phase } from '../model/trace';
import { countBy } from './nodes';

/** What an operator is doing at the playhead, for the plan tree and the Plan lane. */
export type OperatorStatus = 'not-executed' | 'pending' | 'active' | 'done';

export interface OperatorState {
  status: OperatorStatus;
  /** The phase containing the playhead (consume/build/probe/emit), if any. */
  phase: Phase | null;
  /** Rows have started to flow out (playhead past the first emit). */
  emitting: boolean;
  /** Taking rows in without giving any out yet (consume or build, or before the first emit). */
  consuming: boolean;
}

/** The operator's phase at `us` (the latest-starting phase that contains it). */
export function phaseAt(op: Operator, us: number): Phase | null {
  let found: Phase | null = null;
  for (const p of op.phases) {
    if (p.startUs <= us && us <= p.endUs && p.thread === null) {
      found = p;
    }
  }
  if (found) {
    return found;
  }
  for (const p of op.phases) {
    if (p.startUs <= us && us <= p.endUs) {
      return p;
    }
  }
  return null;
}

export function stateAt(op: Operator, us: number): OperatorState {
  if (!op.executed) {
    return { status: 'not-executed', phase: null, emitting: false, consuming: false };
  }
  if (us < op.startUs) {
    return { status: 'pending', phase: null, emitting: false, consuming: false };
  }
  if (us > op.endUs) {
    return { status: 'done', phase: null, emitting: false, consuming: false };
  }
  const phase = phaseAt(op, us);
  const blockingPhase = phase !== null && (phase.kind === 'consume' || phase.kind === 'build');
  const emitting = !blockingPhase && us >= op.firstEmitUs;
  return { status: 'active', phase, emitting, consuming: !emitting };
}

/**
 * Rows the operator has produced by `us`: the actual-plan row count spread
 * evenly over the emitting span (the frames carry no per-row times, so this
 * is an estimate, shown with "≈"). Null when the actual rows are unknown.
 */
export function rowsSoFar(op: Operator, us: number): number | null {
  if (op.actualRows === null) {
    return null;
  }
  if (us < op.firstEmitUs) {
    return 0;
  }
  if (us >= op.endUs || op.endUs <= op.firstEmitUs) {
    return op.actualRows;
  }
  return Math.round((op.actualRows * (us - op.firstEmitUs)) / (op.endUs - op.firstEmitUs));
}

/** Reads tied to the operator by `us`, counted from the read lane. */
export function readsSoFar(op: Operator, reads: LaneData | undefined, us: number): number {
  return reads ? countBy(reads, op.nodeId, us) : 0;
}

/** A short key of which operators are active and how, so a view redraws only when it changes. */
export function activeSignature(ops: Operator[], us: number): string {
  let sig = '';
  for (const op of ops) {
    const st = stateAt(op, us);
    if (st.status === 'active') {
      sig += `${op.nodeId}${st.emitting ? 'e' : 'c'},`;
    }
  }
  return sig;
}
