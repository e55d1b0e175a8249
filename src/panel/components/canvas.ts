/** Sizes a canvas for the device pixel ratio and returns its 2D context scaled to CSS pixels. */
export function prepareCanvas(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D | null {
  const dpr = typeof window !== 'undefined' ? Math.min(window.devicePixelRatio || 1, 3) : 1;
  const w = Math.max(1, Math.floor(width * dpr));
  const h = Math.max(1, Math.floor(height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  if (ctx) {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  return ctx;
}

/** Runs `draw` at most once per animation frame however often it is asked for. */
export class FrameScheduler {
  private id: number | null = null;

  constructor(private readonly draw: () => void) {}

  request(): void {
    if (this.id !== null) {
      return;
    }
    this.id = requestAnimationFrame(() => {
      this.id = null;
      this.draw();
    });
  }

  cancel(): void {
    if (this.id !== null) {
      cancelAnimationFrame(this.id);
      this.id = null;
    }
  }
}
