/**
 * The legend of the timeline's operator rows, in the terminal replay's
 * words (cmd/queryreplay replaytext.go phaseLegend: "░ consume ▒ build
 * ▓ probe █ emit ≡ re-executed · open, phase unknown"). phaseLook is what
 * the timeline paints each phase with, so the two cannot drift apart.
 */

export type PhaseLook = 'hatched' | 'dotted' | 'solid' | 'ticks' | 'faint' | 'dashed';

/** How a phase kind is drawn: consume and build hatched, probe dotted, emit solid, re-executed ticked. */
export function phaseLook(kind: string): PhaseLook {
  switch (kind) {
    case 'emit':
      return 'solid';
    case 'probe':
      return 'dotted';
    case 'reexecuted':
      return 'ticks';
    default:
      return 'hatched';
  }
}

export interface LegendKey {
  /** A phase kind, or 'span' (the operator open, phase unknown) / 'not-executed'. */
  kind: string;
  look: PhaseLook;
  label: string;
  title: string;
}

export const PHASE_KEYS: LegendKey[] = [
  {
    kind: 'consume',
    look: phaseLook('consume'),
    label: 'consume',
    title: 'hatched: taking rows in, none given out yet',
  },
  { kind: 'build', look: phaseLook('build'), label: 'build', title: 'hatched: building (a hash table, a sort)' },
  { kind: 'probe', look: phaseLook('probe'), label: 'probe', title: 'dotted: probing what was built' },
  { kind: 'emit', look: phaseLook('emit'), label: 'emit', title: 'solid: giving rows out' },
  {
    kind: 'reexecuted',
    look: phaseLook('reexecuted'),
    label: 're-executed',
    title: 'ticks: ran many times inside this span',
  },
  {
    kind: 'span',
    look: 'faint',
    label: 'open, phase unknown',
    title: 'faint: the operator was open, its phase is not known',
  },
  { kind: 'not-executed', look: 'dashed', label: 'not executed', title: 'dashed outline: the operator never ran' },
];
