import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';
import { Description } from '../replay/describe';

/** A description's rows as a two-column definition list (the event view and the operator details). */
export function FieldList({ rows }: { rows: Description['rows'] }) {
  const styles = useStyles2(getStyles);
  return (
    <dl className={styles.fields}>
      {rows.map(([k, v]) => (
        <React.Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </React.Fragment>
      ))}
    </dl>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  fields: css({
    display: 'grid',
    gridTemplateColumns: 'max-content 1fr',
    columnGap: 8,
    margin: 0,
    dt: { color: theme.colors.text.secondary },
    dd: { margin: 0, wordBreak: 'break-word' },
  }),
});
