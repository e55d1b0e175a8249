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

/** A tab's width from its name: Grafana's tab text (about 7 px a character) and its padding. */
const CHAR_PX = 7;
const TAB_PAD_PX = 24;

/** The width the tabs take with their full names (findings with its count, " 12"). */
export function fullTabsWidth(views: LinkedView[]): number {
  return views.reduce((w, v) => w + (TAB_LABEL[v].length + (v === 'findings' ? 3 : 0)) * CHAR_PX + TAB_PAD_PX, 0);
}

/**
 * A tab's name in a side panel sideW wide: the full names when all of them fit, else the long ones shortened.
 * With the list of tabs the test is their names' width (at 1280×720 eight tabs averaged 90 px, and 75 px a tab
 * cut "Event & stack"); with only a count, TAB_FULL_PX a tab.
 */
export function tabLabel(v: LinkedView, sideW: number, tabs: number | LinkedView[]): string {
  const need = typeof tabs === 'number' ? TAB_FULL_PX * tabs : fullTabsWidth(tabs);
  return sideW < need ? (TAB_SHORT[v] ?? TAB_LABEL[v]) : TAB_LABEL[v];
}
