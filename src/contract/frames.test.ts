import fs from 'fs';
import path from 'path';
import { DataFrameJSON, FieldType, dataFrameFromJSON } from '@grafana/data';
import { lanesFromFrames } from '../panel/replay/lanes';

// Go writes these files (go test ./pkg/frames -update); this test decodes them
// exactly as Grafana's frontend does and checks the shapes our panels need.
const dir = path.join(__dirname, '..', '..', 'testdata', 'frames');

function load(name: string) {
  const raw = JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8')) as DataFrameJSON[];
  return raw.map((f) => dataFrameFromJSON(f));
}

describe('Go → TypeScript frame contract', () => {
  it('has a contract file for every Go frame builder', () => {
    expect(fs.readdirSync(dir).sort()).toEqual(['lane_read.json', 'plan.json']);
  });

  it('decodes lane frames into replayable lanes', () => {
    const frames = load('lane_read');
    const lane = frames[0];
    expect(lane.fields.filter((f) => f.type === FieldType.time)).toHaveLength(2);
    expect(typeof lane.fields[0].values[0]).toBe('number');
    expect(lane.meta?.preferredVisualisationPluginId).toBe('queryreplay-replay-panel');
    const { lanes, skipped } = lanesFromFrames(frames);
    expect(skipped).toEqual([]);
    expect(lanes[0].entries.length).toBe(lane.length);
    expect(lanes[0].entries.some((e) => e.nodeId === null)).toBe(true);
  });

  it('decodes the plan as a node graph whose edges reference nodes', () => {
    const [nodes, edges] = load('plan');
    expect(nodes.fields.some((f) => f.name === 'source')).toBe(false);
    expect(edges.fields.some((f) => f.name === 'source')).toBe(true);
    expect(nodes.meta?.preferredVisualisationType).toBe('nodeGraph');
    const ids = new Set(nodes.fields.find((f) => f.name === 'id')!.values);
    for (const name of ['source', 'target']) {
      for (const v of edges.fields.find((f) => f.name === name)!.values) {
        expect(ids.has(v)).toBe(true);
      }
    }
    for (const n of ['id', 'title', 'subtitle']) {
      expect(nodes.fields.find((f) => f.name === n)!.type).toBe(FieldType.string);
    }
    expect(nodes.fields.find((f) => f.name === 'mainstat')!.type).toBe(FieldType.number);
  });
});
