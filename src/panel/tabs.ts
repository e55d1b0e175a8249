import { LinkedView } from './types';

/** The side panel's tab names (the full name is also each tab's hover text). */
export const TAB_LABEL: Record<LinkedView, string> = {
  statements: 'Statements',
  findings: 'Findings',
  plan: 'Plan',
  diagram: 'Diagram',
  pages: 'Pages',
  locks: 'Locks',
  stack: 'Event & stack',
  summary: 'I/O & waits',
};

/** In a narrow side panel the long tab names shorten, so none is cut (the full name is the hover text). */
const TAB_SHORT: Partial<Record<LinkedView, string>> = { summary: 'I/O', stack: 'Stack', statements: 'Stmts' };

/** A tab's full name takes about 75 px on average: below that per tab, the long names shorten. */
export const TAB_FULL_PX = 75;

export function tabLabel(v: LinkedView, sideW: number, tabCount: number): string {
  return sideW < TAB_FULL_PX * tabCount ? (TAB_SHORT[v] ?? TAB_LABEL[v]) : TAB_LABEL[v];
}
