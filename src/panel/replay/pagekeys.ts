import { Operator, Pages } from '../model/trace';
import { Palette } from '../render/palette';
import { ColorBy } from '../render/timeline';

/**
 * The page map's colours and its legend from one place: the map paints a
 * page with pageColor, and the legend lists exactly the colours pageColor
 * gives the pages on screen, so a legend can never say "yellow = read"
 * while the pages are drawn blue.
 */

export type PageState = 'not-yet' | 'read' | 'written' | 'being-read';

/** The colour of a page in a state (for a read page, by its operator or the read lane). */
export function pageColor(state: PageState, node: number, palette: Palette, colorBy: ColorBy): string {
  switch (state) {
    case 'not-yet':
      return palette.laneBackgroundAlt;
    case 'written':
      return palette.lane.write;
    case 'being-read':
      return palette.flash;
    case 'read':
      return colorBy === 'operator' ? palette.operator(node) : palette.lane.read;
  }
}

export interface PageKey {
  color: string;
  label: string;
  /** The full text when the label is shortened. */
  title: string;
  outline: boolean;
}

/** The legend of the page map: the read colours of the operators whose pages it shows, then the states. */
export function pageKeys(pages: Pages, byNode: Map<number, Operator>, palette: Palette, colorBy: ColorBy): PageKey[] {
  const keys: PageKey[] = [
    {
      color: pageColor('being-read', -1, palette, colorBy),
      label: 'being read',
      title: 'being read now',
      outline: false,
    },
  ];
  if (colorBy === 'operator') {
    const nodes = Array.from(new Set(Array.from(pages.node))).sort((a, b) => a - b);
    for (const n of nodes) {
      const op = byNode.get(n);
      const name = op ? `${op.nodeId} ${op.name}${op.object ? ` ${shortObject(op.object)}` : ''}` : 'no operator';
      keys.push({
        color: pageColor('read', n, palette, colorBy),
        label: `read by ${name}`,
        title: `read by ${op ? `${op.nodeId} ${op.name} ${op.object}`.trim() : 'no operator (unmatched)'}`,
        outline: false,
      });
    }
  } else {
    keys.push({ color: pageColor('read', -1, palette, colorBy), label: 'read', title: 'read', outline: false });
  }
  keys.push({ color: pageColor('written', -1, palette, colorBy), label: 'written', title: 'written', outline: false });
  keys.push({
    color: pageColor('not-yet', -1, palette, colorBy),
    label: 'not yet',
    title: 'not touched yet',
    outline: true,
  });
  return keys;
}

/** "[dbo].[Orders].[PK_Orders]" → "Orders.PK_Orders". */
export function shortObject(object: string): string {
  const parts = object.replace(/[[\]]/g, '').split('.');
  return parts.length >= 3 ? parts.slice(-2).join('.') : parts.join('.');
}
