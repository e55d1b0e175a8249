import { goldenTrace } from '../testing/fixtures';
import { phaseAt, readsSoFar, rowsSoFar, stateAt } from './phases';

// the golden trace: hash join 0 builds 10-300 and probes 300-880 (first row out at 400);
// scan 1 emits 25-290; scan 2 runs 310-870 without phases.
const trace = goldenTrace();
const join = trace.byNode.get(0)!;
const scan1 = trace.byNode.get(1)!;

describe('operator state at the playhead', () => {
  it('is pending before, done after', () => {
    expect(stateAt(join, 5).status).toBe('pending');
    expect(stateAt(join, 890).status).toBe('done');
  });

  it('consumes while building and emits while probing after the first row', () => {
    const building = stateAt(join, 100);
    expect(building).toMatchObject({ status: 'active', consuming: true, emitting: false });
    expect(building.phase?.kind).toBe('build');
    const probingEarly = stateAt(join, 350);
    expect(probingEarly.phase?.kind).toBe('probe');
    expect(probingEarly.emitting).toBe(false);
    expect(stateAt(join, 500)).toMatchObject({ emitting: true, consuming: false });
  });

  it('finds the phase at a time', () => {
    expect(phaseAt(scan1, 100)?.kind).toBe('emit');
    expect(phaseAt(scan1, 22)).toBeNull();
  });

  it('spreads actual rows over the emitting span', () => {
    expect(rowsSoFar(join, 399)).toBe(0);
    expect(rowsSoFar(join, 640)).toBe(6);
    expect(rowsSoFar(join, 900)).toBe(12);
    expect(rowsSoFar(trace.byNode.get(2)!, 500)).toBeNull();
  });

  it('counts reads tied to the operator so far', () => {
    const scan2 = trace.byNode.get(2)!;
    expect(readsSoFar(scan2, trace.lanes.read, 319)).toBe(0);
    expect(readsSoFar(scan2, trace.lanes.read, 325)).toBe(1);
    expect(readsSoFar(scan2, trace.lanes.read, 900)).toBe(2);
    expect(readsSoFar(scan1, trace.lanes.read, 900)).toBe(1);
  });

  it('reports not-executed operators as such', () => {
    expect(stateAt({ ...join, executed: false }, 100).status).toBe('not-executed');
  });
});
