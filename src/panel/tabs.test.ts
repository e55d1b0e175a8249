import { TAB_FULL_PX, TAB_LABEL, tabLabel } from './tabs';
import { LinkedView } from './types';

describe('side panel tab names', () => {
  it('keeps the full names when each tab has room for one', () => {
    expect(tabLabel('stack', TAB_FULL_PX * 7, 7)).toBe('Event & stack');
    expect(tabLabel('summary', 1200, 8)).toBe(TAB_LABEL.summary);
  });

  it('shortens the long names when the tabs would not fit, whatever their number', () => {
    // eight tabs (a statement tree and findings) in a 525 px side panel: the screenshot where "Event & stack" was cut
    expect(tabLabel('stack', 525, 8)).toBe('Stack');
    expect(tabLabel('statements', 525, 8)).toBe('Stmts');
    expect(tabLabel('summary', 525, 8)).toBe('I/O');
    // names that are already short stay whole
    expect(tabLabel('plan', 300, 8)).toBe('Plan');
    // six tabs fit in the same width
    expect(tabLabel('stack', 525, 6)).toBe('Event & stack');
  });

  it('shortens by the names the tabs carry: eight tabs in the 620 px side panel of a 1280×720 viewer', () => {
    // the diagram screenshot at 1280×720 cut "Event & stack" to "Ev" with full names in 620 px
    const eight: LinkedView[] = ['statements', 'findings', 'plan', 'diagram', 'summary', 'pages', 'locks', 'stack'];
    expect(tabLabel('stack', 620, eight)).toBe('Stack');
    expect(tabLabel('summary', 620, eight)).toBe('I/O');
    // at 1920×1080 the side panel is about 930 px: every name whole
    expect(tabLabel('stack', 930, eight)).toBe('Event & stack');
    // few short tabs keep their names in a narrow panel
    expect(tabLabel('stack', 300, ['plan', 'stack'])).toBe('Event & stack');
  });
});
