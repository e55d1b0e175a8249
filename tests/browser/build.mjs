// Builds the browser harness: the real panel, React and @grafana/* in one
// esbuild bundle (tests/browser/dist/harness.js + harness.css), plus
// @grafana/ui's icons where Grafana would serve them (build/img/icons).
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '..', '..');
const out = path.join(here, 'dist');
fs.rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: [path.join(here, 'harness.tsx')],
  bundle: true,
  minify: true,
  outfile: path.join(out, 'harness.js'),
  loader: { '.svg': 'text', '.woff2': 'file', '.woff': 'file', '.ttf': 'file' },
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
fs.cpSync(
  path.join(root, 'node_modules', '@grafana', 'ui', 'dist', 'public', 'img', 'icons'),
  path.join(out, 'build', 'img', 'icons'),
  {
    recursive: true,
  }
);
console.log(`harness built in ${path.relative(root, out)}`);
