import { plugin } from './module';
import { DEFAULT_OPTIONS, withDefaults } from './types';

jest.mock('@grafana/runtime', () => ({ ...jest.requireActual('@grafana/runtime'), getBackendSrv: () => ({}) }));

describe('panel options', () => {
  it('offers lanes, colouring, time unit, linked view and detail fetching', () => {
    const builder = { items: [] as Array<{ path: string; defaultValue: unknown }> };
    const add = (item: { path: string; defaultValue: unknown }) => {
      builder.items.push(item);
      return api;
    };
    const api = { addMultiSelect: add, addRadio: add, addBooleanSwitch: add } as never;
    // the builder callback given to setPanelOptions, called with a recording builder
    const supplier = (plugin as unknown as { optionsSupplier: (b: unknown) => void }).optionsSupplier;
    supplier(api);
    expect(builder.items.map((i) => i.path)).toEqual(['lanes', 'colorBy', 'timeUnit', 'linkedView', 'fetchDetail']);
    expect(builder.items.find((i) => i.path === 'lanes')!.defaultValue).toEqual(DEFAULT_OPTIONS.lanes);
  });

  it('fills options missing from old dashboards and keeps the lane order', () => {
    expect(withDefaults(undefined)).toEqual(DEFAULT_OPTIONS);
    expect(withDefaults({ lanes: ['lock', 'plan'] }).lanes).toEqual(['plan', 'lock']);
    expect(withDefaults({ lanes: [] }).lanes).toEqual(DEFAULT_OPTIONS.lanes);
  });
});
