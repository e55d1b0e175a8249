import { EVENT_GROUPS, EventGroup, QueryType } from '../../types';
import { SavedTrace } from '../CompareForm';

/**
 * The query editor's pure rules: the mode a query is in, how the event
 * group checkboxes and number inputs change the options, and how a failed
 * request and a saved trace read. Plain functions, unit-tested without
 * rendering.
 */

/** The editor's mode: a query without a known type traces. */
export function modeOf(queryType: string | undefined): QueryType {
  return (['bundle', 'probe', 'compare'] as const).find((m) => m === queryType) ?? 'trace';
}

/** A number input: empty clears the option (the data source's setting applies). */
export function optionalNumber(v: string): number | undefined {
  return v === '' ? undefined : Number(v);
}

/** The event groups after one checkbox changes, in EVENT_GROUPS order. */
export function toggleGroup(groups: readonly EventGroup[], g: EventGroup, checked: boolean): EventGroup[] {
  return checked ? EVENT_GROUPS.filter((x) => x === g || groups.includes(x)) : groups.filter((x) => x !== g);
}

/** What a failed resource request says: the server's error, else its message, else the status. */
export function errorText(e: unknown): string {
  const fe = e as { data?: { error?: string; message?: string }; message?: string; status?: number };
  return fe.data?.error ?? fe.data?.message ?? fe.message ?? `request failed (${fe.status ?? 'no status'})`;
}

/** A saved trace's duration in milliseconds, one decimal at most: "7.7 ms". */
export function durationText(t: Pick<SavedTrace, 'durationUs'>): string {
  return `${(t.durationUs / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} ms`;
}
