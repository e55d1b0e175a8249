import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { RadioButtonGroup, useStyles2 } from '@grafana/ui';
import { LaneData, Operator, Pages } from '../model/trace';
import { pageColor, pageKeys } from '../replay/pagekeys';
import {
  PageLayout,
  PageMapMode,
  PageTiming,
  firstTouchedBetween,
  layoutPages,
  pageTiming,
  readBetween,
  touchedBy,
} from '../replay/pagemap';
import { span } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { Palette } from '../render/palette';
import { ColorBy } from '../render/timeline';
import { CanvasPainter } from './canvas';
import { useReplay } from './useStore';

interface Props {
  pages: Pages | null;
  reads: LaneData | undefined;
  writes: LaneData | undefined;
  store: ReplayStore;
  palette: Palette;
  colorBy: ColorBy;
  width: number;
  height: number;
  /** Operators by NodeId, to name whose pages each legend colour is. */
  operators?: Map<number, Operator>;
}

const MODES = [
  { label: 'Allocations', value: 'allocations' as const, description: 'the pages of each object, by page id' },
  { label: 'Index', value: 'index' as const, description: 'B-tree levels, root to leaf' },
];

/** What the page map last painted, so a forward move paints only what changed. */
class Painted {
  t = -Infinity;
  flash: number[] = [];
  full = true;
  invalidate() {
    this.full = true;
  }
}

interface Paint {
  width: number;
  height: number;
  pages: Pages;
  layout: PageLayout;
  timing: PageTiming;
  store: ReplayStore;
  palette: Palette;
  colorBy: ColorBy;
  painted: Painted;
}

function paint(ctx: CanvasRenderingContext2D, p: Paint): void {
  const { pages, layout, timing, palette, painted, width, height } = p;
  if (layout.unavailable) {
    return;
  }
  const st = p.store.get();
  const now = st.playheadUs;
  const flashUs = Math.max(1, span(st.window) * 0.015);
  const color = (i: number) =>
    pageColor(
      pages.firstUs[i] > now ? 'not-yet' : timing.firstWrite[i] <= now ? 'written' : 'read',
      pages.node[i],
      palette,
      p.colorBy
    );
  const cell = (i: number, c: string) => {
    if (layout.x[i] < 0) {
      return;
    }
    ctx.fillStyle = c;
    ctx.fillRect(layout.x[i], layout.y[i], layout.cell, layout.cell);
  };
  if (painted.full || now < painted.t) {
    ctx.clearRect(0, 0, width, height);
    ctx.font = `500 11px ${palette.fontFamily}`;
    ctx.textBaseline = 'top';
    ctx.fillStyle = palette.textWeak;
    for (const h of layout.headers) {
      ctx.fillText(h.text, 0, h.y + 1);
    }
    for (let i = 0; i < pages.n; i++) {
      cell(i, color(i));
    }
  } else {
    for (const i of painted.flash) {
      cell(i, color(i));
    }
    const [a, b] = firstTouchedBetween(timing, painted.t, now);
    for (let k = a; k < b; k++) {
      cell(timing.byFirst[k], color(timing.byFirst[k]));
    }
  }
  const flash = readBetween(timing, now - flashUs, now);
  for (const i of flash) {
    cell(i, pageColor('being-read', pages.node[i], palette, p.colorBy));
  }
  painted.t = now;
  painted.flash = flash;
  painted.full = false;
}

/**
 * The page map: every page the query touched, lighting up as reads pass
 * the playhead (bright for a moment, then in its operator's colour; written
 * pages in the write colour). Drawn on a canvas, incrementally while the
 * playhead moves forward.
 */
export function PageMap({ pages, reads, writes, store, palette, colorBy, width, height, operators }: Props) {
  const styles = useStyles2(getStyles);
  const [mode, setMode] = useState<PageMapMode>('allocations');
  const ref = useRef<HTMLCanvasElement>(null);
  const keys = useMemo(
    () => (pages ? pageKeys(pages, operators ?? new Map(), palette, colorBy) : []),
    [pages, operators, palette, colorBy]
  );
  // the legend wraps: leave room for its lines (about 6.5 px a character, 24 px a key)
  const legendW = keys.reduce((a, k) => a + 24 + k.label.length * 6.5, 0);
  const mapH = Math.max(20, height - 52 - 15 * (Math.ceil(legendW / Math.max(width, 1)) - 1));
  const layout = useMemo(() => (pages ? layoutPages(pages, mode, width, mapH) : null), [pages, mode, width, mapH]);
  const timing = useMemo(() => (pages ? pageTiming(pages, reads, writes) : null), [pages, reads, writes]);
  const [painted] = useState(() => new Painted());
  const [painter] = useState(() => new CanvasPainter<Paint>(paint));

  useLayoutEffect(() => {
    if (pages && layout && timing) {
      painted.invalidate();
      painter.update(ref.current, { width, height: mapH, pages, layout, timing, store, palette, colorBy, painted });
    }
  }, [painter, painted, pages, layout, timing, width, mapH, store, palette, colorBy]);
  useEffect(() => store.subscribe(painter.request), [store, painter]);
  useEffect(() => () => painter.dispose(), [painter]);

  if (!pages) {
    return <div className={styles.note}>The frames carry no pages frame.</div>;
  }
  return (
    <div className={styles.wrap} data-testid="qr-page-map">
      <div className={styles.bar}>
        <RadioButtonGroup size="sm" options={MODES} value={mode} onChange={(v) => setMode(v)} />
        {timing && <TouchedCount store={store} timing={timing} total={pages.n} />}
      </div>
      {layout?.unavailable ? (
        <div className={styles.note} data-testid="qr-page-map-note">
          {layout.unavailable}
        </div>
      ) : (
        <canvas
          ref={ref}
          data-testid="qr-page-map-canvas"
          data-mode={mode}
          data-groups={layout?.headers.map((h) => h.text).join('\n')}
          aria-label="Pages touched so far"
          role="img"
        />
      )}
      {layout && layout.hidden > 0 && !layout.unavailable && (
        <div className={styles.count}>
          {layout.hidden.toLocaleString('en-US')} more pages do not fit; enlarge the panel.
        </div>
      )}
      <div className={styles.legend} data-testid="qr-page-legend">
        {keys.map((k) => (
          <span key={k.label} className={styles.entry} title={k.title} data-color={k.color}>
            <span
              className={styles.key}
              style={{ background: k.color, outline: k.outline ? `1px solid ${palette.border}` : undefined }}
            />
            {k.label}
          </span>
        ))}
      </div>
    </div>
  );
}

/** Pages touched by the playhead: its own component, so the map itself does not re-render each frame. */
function TouchedCount({ store, timing, total }: { store: ReplayStore; timing: PageTiming; total: number }) {
  const styles = useStyles2(getStyles);
  const touched = useReplay(store, (s) => touchedBy(timing, s.playheadUs));
  return (
    <span className={styles.count} data-testid="qr-pages-touched">
      {touched.toLocaleString('en-US')} / {total.toLocaleString('en-US')} pages touched
    </span>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ display: 'flex', flexDirection: 'column', gap: 4, height: '100%', overflow: 'hidden' }),
  bar: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), flexWrap: 'wrap' }),
  count: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  note: css({
    color: theme.colors.text.secondary,
    padding: theme.spacing(1),
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  legend: css({
    display: 'flex',
    alignItems: 'center',
    flexWrap: 'wrap',
    columnGap: 10,
    fontSize: 11,
    color: theme.colors.text.secondary,
  }),
  entry: css({ display: 'inline-flex', alignItems: 'center', gap: 4, whiteSpace: 'nowrap' }),
  key: css({ display: 'inline-block', width: 9, height: 9 }),
});
