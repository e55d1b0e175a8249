/**
 * A recording 2D context for jsdom (which has no canvas): every fillRect is
 * kept with its fill style, so tests can check what the panel drew.
 */
export interface DrawnRect {
  x: number;
  y: number;
  w: number;
  h: number;
  fill: string;
}

export class RecordingContext {
  rects: DrawnRect[] = [];
  texts: string[] = [];
  fillStyle: unknown = '#000';
  strokeStyle: unknown = '#000';
  lineWidth = 1;
  font = '';
  textAlign = 'left';
  textBaseline = 'alphabetic';
  globalAlpha = 1;
  fillRect(x: number, y: number, w: number, h: number) {
    this.rects.push({ x, y, w, h, fill: String(this.fillStyle) });
  }
  clearRect() {
    this.rects = [];
    this.texts = [];
  }
  fillText(t: string) {
    this.texts.push(t);
  }
  measureText(t: string) {
    return { width: t.length * 6 };
  }
  createPattern() {
    return null;
  }
  setTransform() {}
  strokeRect() {}
  save() {}
  restore() {}
  setLineDash() {}
  beginPath() {}
  moveTo() {}
  lineTo() {}
  closePath() {}
  fill() {}
  stroke() {}
}

/** Makes every canvas in jsdom return its own RecordingContext (kept on the element). */
export function installFakeCanvas(): void {
  const proto = HTMLCanvasElement.prototype as unknown as { getContext: () => unknown; __ctx?: RecordingContext };
  proto.getContext = function (this: HTMLCanvasElement & { __ctx?: RecordingContext }) {
    if (!this.__ctx) {
      this.__ctx = new RecordingContext();
    }
    return this.__ctx;
  };
}

export function contextOf(c: Element): RecordingContext {
  return (c as unknown as { __ctx: RecordingContext }).__ctx;
}
