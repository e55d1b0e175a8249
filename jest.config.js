// force timezone to UTC so that time formatting in tests is stable
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');
const swc = base.transform['^.+\\.(t|j)sx?$'];

module.exports = {
  ...base,
  // d3-color >= 3.1.1 ships only dist/*.mjs; the scaffolded transform regex misses .mjs
  transform: { '^.+\\.(t|j)sx?$': swc, '^.+\\.mjs$': swc },
};
