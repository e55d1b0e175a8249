import { ScopedVars, TimeRange, TypedVariableModel } from '@grafana/data';
import { TemplateSrv } from '@grafana/runtime';

// @grafana/runtime publishes only the TemplateSrv interface (setTemplateSrv,
// getTemplateSrv); the implementation lives in Grafana's app
// (public/app/features/templating/template_srv.ts). This one follows the
// documented syntax and formats
// (grafana.com/docs/grafana/latest/dashboards/variables/variable-syntax/):
// `$var`, `${var}`, `${var:format}`, `[[var]]`, `[[var:format]]`; scoped
// variables win over dashboard ones; a format in the text wins over the
// caller's; an unknown variable is left as written; one pass, so a value
// that itself holds `${x}` is not expanded again.

/** Grafana's variable regex (public/app/features/variables/utils.ts, variableRegex). */
const VARIABLE = /\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\${(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?}/g;

function format(value: string | string[], fmt: string | undefined): string {
  const values = Array.isArray(value) ? value : [value];
  switch (fmt) {
    case 'raw':
      return values.join(',');
    case 'singlequote':
      return values.map((v) => `'${v.replace(/'/g, "\\'")}'`).join(',');
    case 'sqlstring':
      return values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');
    case 'csv':
      return values.join(',');
    case 'percentencode':
      return values.map(encodeURIComponent).join(',');
    case undefined:
    case 'glob':
      return values.length === 1 ? values[0] : `{${values.join(',')}}`;
    default:
      throw new Error(`test TemplateSrv: format ${fmt} not implemented`);
  }
}

/** A TemplateSrv over a fixed map of dashboard variables (name to value). */
export class TestTemplateSrv implements TemplateSrv {
  constructor(private readonly vars: Record<string, string | string[]>) {}

  getVariables(): TypedVariableModel[] {
    return [];
  }

  replace(target?: string, scopedVars?: ScopedVars, fmt?: string | Function): string {
    if (!target) {
      return target ?? '';
    }
    return target.replace(VARIABLE, (match, v1, v2, f2, v3, _field, f3) => {
      const name: string = v1 || v2 || v3;
      const scoped = scopedVars?.[name];
      const value = scoped ? scoped.value : this.vars[name];
      if (value === undefined || value === null) {
        return match;
      }
      const f = f2 || f3 || (typeof fmt === 'string' ? fmt : undefined);
      return format(value as string | string[], f);
    });
  }

  containsTemplate(target?: string): boolean {
    return !!target && new RegExp(VARIABLE.source).test(target);
  }

  updateTimeRange(_: TimeRange): void {}
}
