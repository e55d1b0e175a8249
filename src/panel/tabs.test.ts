import { TAB_FULL_PX, TAB_LABEL, tabLabel } from './tabs';

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
});
