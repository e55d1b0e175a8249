import React from 'react';
import { act, render, screen } from '@testing-library/react';
import { ReplayPanel } from './ReplayPanel';
import { DebugPanel } from './replay/debug';
import { ARIA_INTERVAL_MS } from './components/Scrubber';
import { goldenFrames } from './testing/fixtures';
import { props } from './testing/panelProps';
import { installFakeCanvas } from './testing/fakeCanvas';

// The scrubber is a slider for assistive technology: its value and text follow the playhead.

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: jest.fn() }),
}));

installFakeCanvas();

const frames = goldenFrames('trace_response');
const store = () =>
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: { panels: DebugPanel[] } }).__QUERYREPLAY_DEBUG__.panels[0].store;

beforeEach(() => {
  (globalThis as unknown as { __QUERYREPLAY_DEBUG__: unknown }).__QUERYREPLAY_DEBUG__ = { panels: [] };
  jest.useFakeTimers();
});
afterEach(() => jest.useRealTimers());

describe('the scrubber slider', () => {
  it('says where the playhead is after it moves', () => {
    render(<ReplayPanel {...props(frames)} />);
    const slider = screen.getByRole('slider', { name: 'Playhead over the whole trace' });
    const start = store().get().playheadUs;
    expect(slider).toHaveAttribute('aria-valuenow', String(Math.round(start)));
    const before = slider.getAttribute('aria-valuetext');
    act(() => store().set({ playheadUs: 700 }));
    expect(slider).toHaveAttribute('aria-valuenow', '700');
    expect(slider.getAttribute('aria-valuetext')).not.toBe(before);
    expect(slider).toHaveAttribute('aria-valuetext', '700 µs');
  });

  it('follows a playhead that moves every frame at a throttled rate, ending where it stopped', () => {
    render(<ReplayPanel {...props(frames)} />);
    const slider = screen.getByTestId('qr-scrubber');
    act(() => store().set({ playheadUs: 100 }));
    expect(slider).toHaveAttribute('aria-valuetext', '100 µs');
    // playback: a move every 16 ms; the slider's text waits for the interval
    for (let us = 101; us <= 105; us++) {
      act(() => {
        jest.advanceTimersByTime(16);
        store().set({ playheadUs: us });
      });
    }
    expect(slider).toHaveAttribute('aria-valuetext', '100 µs');
    act(() => jest.advanceTimersByTime(ARIA_INTERVAL_MS));
    expect(slider).toHaveAttribute('aria-valuetext', '105 µs');
    expect(slider).toHaveAttribute('aria-valuenow', '105');
  });
});
