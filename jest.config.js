// force timezone to UTC so that time formatting in tests is stable
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');
const { grafanaESModules, nodeModulesToTransform } = require('./.config/jest/utils');
const swc = base.transform['^.+\\.(t|j)sx?$'];

module.exports = {
  ...base,
  // d3-color >= 3.1.1 ships only dist/*.mjs; the scaffolded transform regex misses .mjs
  transform: { '^.+\\.(t|j)sx?$': swc, '^.+\\.mjs$': swc },
  // @grafana/flamegraph (src/contract/panels.test.ts) requires d3, whose
  // packages ship ES modules only
  // Full renders of Grafana's editors take seconds on a busy 2-core machine;
  // 5 s (jest's default) failed there while the same tests pass in 1 s alone.
  testTimeout: 30000,
  transformIgnorePatterns: [
    nodeModulesToTransform([...grafanaESModules, 'd3', 'd3-[a-z-]+', 'internmap', 'delaunator', 'robust-predicates']),
  ],
};
