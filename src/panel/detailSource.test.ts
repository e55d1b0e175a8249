import { DataQueryRequest } from '@grafana/data';
import { DATASOURCE_TYPE, DatasourceLookup, datasourceOf } from './detailSource';

const request = (datasource?: { uid?: string; type?: string }) =>
  ({ targets: [{ refId: 'A', datasource }] }) as unknown as DataQueryRequest;

const lookup = (
  def: { uid: string; type: string } | undefined,
  all: Array<{ uid: string; type: string }>
): DatasourceLookup => ({
  getInstanceSettings: (ref) => {
    if (ref === null || ref === undefined) {
      return def;
    }
    const uid = typeof ref === 'string' ? ref : ref.uid;
    return uid === '${ds}' ? { uid: 'qr-prod', type: DATASOURCE_TYPE } : all.find((d) => d.uid === uid);
  },
  getList: (f) => all.filter((d) => !f?.type || d.type === f.type),
});

describe('datasourceOf', () => {
  const prom = { uid: 'prometheus', type: 'prometheus' };
  const qr = { uid: 'queryreplay', type: DATASOURCE_TYPE };

  it("takes the query's own datasource first", () => {
    expect(datasourceOf(request({ uid: 'queryreplay', type: DATASOURCE_TYPE }), lookup(prom, [prom, qr]))).toEqual(qr);
  });

  it('resolves a template variable through the lookup', () => {
    expect(datasourceOf(request({ uid: '${ds}' }), lookup(prom, [prom, qr]))).toEqual({
      uid: 'qr-prod',
      type: DATASOURCE_TYPE,
    });
  });

  it("falls back to the panel's datasource: the default when it is ours, else the only QueryReplay one", () => {
    expect(datasourceOf(request(undefined), lookup(qr, [prom, qr]))).toEqual(qr);
    expect(datasourceOf(request(undefined), lookup(prom, [prom, qr]))).toEqual(qr);
    const two = [qr, { uid: 'qr2', type: DATASOURCE_TYPE }];
    expect(datasourceOf(request(undefined), lookup(prom, two))).toBeNull();
  });

  it('needs no lookup for a named datasource, and survives a lookup that throws', () => {
    expect(datasourceOf(request({ uid: 'x', type: DATASOURCE_TYPE }), null)).toEqual({
      uid: 'x',
      type: DATASOURCE_TYPE,
    });
    expect(datasourceOf(request(undefined), null)).toBeNull();
    const broken: DatasourceLookup = {
      getInstanceSettings: () => {
        throw new Error('no srv');
      },
      getList: () => {
        throw new Error('no srv');
      },
    };
    expect(datasourceOf(request(undefined), broken)).toBeNull();
  });
});
