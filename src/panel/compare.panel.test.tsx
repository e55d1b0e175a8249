import React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { LoadingState } from '@grafana/data';
import { ReplayPanel } from './ReplayPanel';
import { compareFrames } from './compare/fixture';
import { DebugPanel } from './replay/debug';
import { props } from './testing/panelProps';
import { contextOf, installFakeCanvas } from './testing/fakeCanvas';
import { nextFrame } from './testing/frames';
import { goldenFrames } from './testing/fixtures';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

const debug = () =>
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: { panels: DebugPanel[] } }).__QUERYREPLAY_DEBUG__;
const side = (s: 'a' | 'b') => debug().panels.find((p) => p.side === s)!;

beforeEach(() => {
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: unknown }).__QUERYREPLAY_DEBUG__ = { panels: [] };
});

describe('the compare mode', () => {
  it('draws both timelines on one axis under the verdict, with the comparison table', async () => {
    render(<ReplayPanel {...props(compareFrames(), 1400, 560)} />);
    await nextFrame();
    expect(screen.getByTestId('qr-compare-verdict')).toHaveTextContent(
      'page reads in the trace 164 → 25; operators: 1 replaced'
    );
    for (const s of ['a', 'b']) {
      const base = contextOf(within(screen.getByTestId(`qr-compare-side-${s}`)).getByTestId('qr-timeline-base'));
      expect(base.texts).toEqual(expect.arrayContaining(['Read 4', '0 Hash Match', '2 CI Scan · Orders']));
    }
    expect(side('a').store.get().window).toEqual(side('b').store.get().window);
    const table = screen.getByTestId('qr-compare-table');
    expect(table.querySelectorAll('[data-testid^="qr-compare-row-"]')).toHaveLength(3);
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((h) => h.textContent)
    ).toEqual(expect.arrayContaining(['operator', 'status', 'reads']));
    expect(screen.getByTestId('qr-compare-row-2')).toHaveAttribute('data-status', 'replaced');
    expect(screen.getByTestId('qr-compare-row-2')).toHaveTextContent('Index Seek replaced Clustered Index Scan');
    expect(screen.getByTestId('qr-compare-row-2')).toHaveTextContent('152 → 13');
  });

  it('selects an operator row in both timelines, and Escape clears', () => {
    render(<ReplayPanel {...props(compareFrames(), 1400, 560)} />);
    fireEvent.click(screen.getByTestId('qr-compare-row-2'));
    for (const s of ['a', 'b'] as const) {
      expect(side(s).store.get().selectedNode).toBe(2);
      expect(side(s).store.get().highlight).toMatchObject({ nodes: [2] });
    }
    expect(screen.getByTestId('qr-compare-row-2')).toHaveAttribute('data-selected', 'true');
    fireEvent.keyDown(screen.getByTestId('qr-compare'), { key: 'Escape' });
    expect(side('b').store.get().highlight).toBeNull();
    expect(screen.getByTestId('qr-compare-row-2')).toHaveAttribute('data-selected', 'false');
  });

  it('zooms both timelines together', () => {
    render(<ReplayPanel {...props(compareFrames(), 1400, 560)} />);
    const before = side('a').store.get().window;
    fireEvent.keyDown(screen.getByTestId('qr-compare'), { key: '+' });
    const after = side('b').store.get().window;
    expect(after.toUs - after.fromUs).toBeLessThan(before.toUs - before.fromUs);
    expect(side('a').store.get().window).toBe(after);
  });

  it('steps both sides with the shared toolbar, to the next event of either trace and back', () => {
    render(<ReplayPanel {...props(compareFrames(), 1400, 560)} />);
    const start = side('a').store.get().playheadUs;
    fireEvent.click(screen.getByTestId('qr-step-next'));
    const next = side('a').store.get().playheadUs;
    expect(next).toBeGreaterThan(start);
    expect(side('b').store.get().playheadUs).toBe(next);
    expect(screen.getByTestId('qr-playhead')).not.toHaveTextContent(/^0 µs/);
    fireEvent.click(screen.getByTestId('qr-step-next'));
    expect(side('a').store.get().playheadUs).toBeGreaterThan(next);
    fireEvent.click(screen.getByTestId('qr-step-back'));
    expect(side('a').store.get().playheadUs).toBe(next);
  });

  it('shows the timelines or the operators one at a time in a 6×8 panel', () => {
    render(<ReplayPanel {...props(compareFrames(), 454, 206)} />);
    expect(screen.getByTestId('qr-compare-side-a')).toBeInTheDocument();
    expect(screen.queryByTestId('qr-compare-table')).toBeNull();
    fireEvent.change(screen.getByTestId('qr-view'), { target: { value: 'operators' } });
    expect(screen.getByTestId('qr-compare-table')).toBeInTheDocument();
    expect(screen.queryByTestId('qr-compare-side-a')).toBeNull();
  });

  it('says it is comparing while a compare query runs, and what is missing after', () => {
    const running = props([], 800, 300, {}, { targets: [{ refId: 'A', queryType: 'compare' }] as never });
    running.data.state = LoadingState.Loading;
    const { unmount } = render(<ReplayPanel {...running} />);
    expect(screen.getByTestId('qr-replay-empty')).toHaveTextContent('Comparing the two traces');
    unmount();
    render(
      <ReplayPanel
        {...props(
          compareFrames().filter((f) => !f.name?.endsWith('_b')),
          800,
          300
        )}
      />
    );
    expect(screen.getByTestId('qr-replay-empty')).toHaveTextContent('lacks the frames of trace B');
  });

  // issue 30 review: a compare of two multi-statement traces showed no
  // statements; the rows now come grouped under their statement pair, each
  // with its status and own verdict, and the verdict line is the batch's
  it('groups the rows by statement pair, each with its own verdict', async () => {
    render(<ReplayPanel {...props(goldenFrames('compare_statements_response'), 1400, 560)} />);
    await nextFrame();
    const verdict = screen.getByTestId('qr-compare-verdict');
    expect(verdict).toHaveTextContent('whole batch:');
    expect(verdict).toHaveTextContent('2 statements (1 changed, 1 same)');
    expect(verdict.getAttribute('title')).toContain('s2 ↔ s2 changed: ');
    const first = screen.getByTestId('qr-compare-statement-0');
    const second = screen.getByTestId('qr-compare-statement-1');
    expect(first).toHaveTextContent('s1 ↔ s1');
    expect(first).toHaveTextContent('no significant change');
    expect(second).toHaveAttribute('data-status', 'changed');
    expect(second).toHaveTextContent('SELECT o.OrderID FROM dbo.Orders AS o');
    expect(second).toHaveTextContent('operators: 1 replaced');
    const rows = Array.from(
      screen.getByTestId('qr-compare-table').querySelectorAll('[data-testid^="qr-compare-row-"]')
    );
    expect(rows.map((r) => r.getAttribute('data-statement'))).toEqual(['0', '0', '0', '1']);
    // the second statement's head comes right before its own row
    expect(second.nextElementSibling).toBe(rows[3]);
  });
});
