import { DataSourcePlugin } from '@grafana/data';
import { ReplayDataSource } from './datasource';
import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { ReplayQuery, ReplayDataSourceOptions } from './types';

export const plugin = new DataSourcePlugin<ReplayDataSource, ReplayQuery, ReplayDataSourceOptions>(ReplayDataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
