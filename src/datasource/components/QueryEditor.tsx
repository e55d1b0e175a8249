import React, { ChangeEvent } from 'react';
import { QueryEditorProps } from '@grafana/data';
import { InlineField, InlineSwitch, Input, TextArea } from '@grafana/ui';
import { ReplayDataSource } from '../datasource';
import { ReplayDataSourceOptions, ReplayQuery } from '../types';

type Props = QueryEditorProps<ReplayDataSource, ReplayQuery, ReplayDataSourceOptions>;

/** Edits the batch to trace and the run options. */
export function QueryEditor({ query, onChange, onRunQuery }: Props) {
  return (
    <>
      <InlineField label="T-SQL" labelWidth={16} grow>
        <TextArea
          id="qr-sql"
          value={query.sql ?? ''}
          rows={5}
          placeholder="SELECT … (run inside a private Extended Events session; modifications are rolled back)"
          onChange={(e: ChangeEvent<HTMLTextAreaElement>) => onChange({ ...query, sql: e.target.value })}
          onBlur={onRunQuery}
        />
      </InlineField>
      <InlineField label="Database" labelWidth={16}>
        <Input
          id="qr-query-database"
          value={query.database ?? ''}
          onChange={(e: ChangeEvent<HTMLInputElement>) => onChange({ ...query, database: e.target.value })}
          width={30}
        />
      </InlineField>
      <InlineField label="Cold cache" labelWidth={16} tooltip="CHECKPOINT + DBCC DROPCLEANBUFFERS before the run">
        <InlineSwitch
          id="qr-cold"
          value={!!query.options?.clearBufferPool}
          onChange={(e) =>
            onChange({ ...query, options: { ...query.options, clearBufferPool: e.currentTarget.checked } })
          }
        />
      </InlineField>
      <InlineField label="No read-ahead" labelWidth={16} tooltip="Trace flag 652 for the run, always turned off after">
        <InlineSwitch
          id="qr-noreadahead"
          value={!!query.options?.disableReadAhead}
          onChange={(e) =>
            onChange({ ...query, options: { ...query.options, disableReadAhead: e.currentTarget.checked } })
          }
        />
      </InlineField>
    </>
  );
}
