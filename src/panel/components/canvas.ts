/** Sizes a canvas for the device pixel ratio and returns its 2D context scaled to CSS pixels. */
export function prepareCanvas(
  canvas: HTMLCanvasElement,
  width: number,
  height: number
): CanvasRenderingContext2D | null {
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

export interface Sized {
  width: number;
  height: number;
}

/**
 * Paints one canvas at most once per animation frame, however often it is
 * asked to: React components hand it the latest props after each render
 * (in a layout effect) and ask for a repaint from store subscriptions and
 * pointer handlers; the paint function itself is a plain module function.
 */
export class CanvasPainter<P extends Sized> {
  private canvas: HTMLCanvasElement | null = null;
  private props: P | null = null;
  private frame: number | null = null;

  constructor(private readonly paint: (ctx: CanvasRenderingContext2D, props: P) => void) {}

  update(canvas: HTMLCanvasElement | null, props: P): void {
    this.canvas = canvas;
    this.props = props;
    this.request();
  }

  current(): P | null {
    return this.props;
  }

  request = (): void => {
    if (this.frame !== null || typeof requestAnimationFrame === 'undefined') {
      return;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.paintNow();
    });
  };

  paintNow(): void {
    if (!this.canvas || !this.props) {
      return;
    }
    const ctx = prepareCanvas(this.canvas, this.props.width, this.props.height);
    if (ctx) {
      this.paint(ctx, this.props);
    }
  }

  dispose(): void {
    if (this.frame !== null) {
      cancelAnimationFrame(this.frame);
      this.frame = null;
    }
    this.canvas = null;
  }
}
