import { act } from '@testing-library/react';

/**
 * Waits for the next animation frame, inside act: the canvases paint in a
 * requestAnimationFrame callback (CanvasPainter) and playback advances in
 * one, and callbacks run in the order they were requested, so when this
 * frame's callback runs every paint and tick asked for before it has run.
 * No fixed sleep: it resolves as soon as the browser (jsdom) runs the frame.
 */
export function nextFrame(): Promise<void> {
  return act(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));
}

/** Waits for n animation frames, one after another (playback needs one frame to start and one to move). */
export async function animationFrames(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await nextFrame();
  }
}
