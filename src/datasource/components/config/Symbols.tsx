import React, { ChangeEvent } from 'react';
import { FieldSet, InlineField, Input, TextArea } from '@grafana/ui';
import { INPUT_W, LABEL_W, SettingsEdit } from './edit';
import { symbolServersSetting } from './fields';

/** Symbol servers and the PDB cache that resolve call stacks. */
export function SymbolsSection({ edit: { jsonData, setJson, text } }: { edit: SettingsEdit }) {
  return (
    <FieldSet label="Call stacks">
      <InlineField
        label="Symbol servers"
        labelWidth={LABEL_W}
        tooltip="One URL per line, for resolving call stacks to module!Class::Method"
      >
        <TextArea
          id="qr-symbol-servers"
          rows={2}
          cols={60}
          value={(jsonData.symbolServers ?? []).join('\n')}
          onChange={(e: ChangeEvent<HTMLTextAreaElement>) =>
            setJson({ symbolServers: symbolServersSetting(e.target.value) })
          }
          placeholder="https://msdl.microsoft.com/download/symbols"
        />
      </InlineField>
      <InlineField
        label="Symbol cache directory"
        labelWidth={LABEL_W}
        tooltip="Where downloaded PDBs are kept on the Grafana host"
      >
        <Input
          id="qr-symbol-cache"
          value={jsonData.symbolCacheDir ?? ''}
          onChange={text('symbolCacheDir')}
          width={INPUT_W}
        />
      </InlineField>
    </FieldSet>
  );
}
