import {
  durationSetting,
  grantedText,
  healthSeverity,
  numberSetting,
  secretSet,
  serverFacts,
  symbolServersSetting,
  textSetting,
  userField,
} from './fields';

describe('config editor fields', () => {
  it('clears a text or number setting when emptied', () => {
    expect(textSetting('')).toBeUndefined();
    expect(textSetting(' db ')).toBe(' db ');
    expect(numberSetting('')).toBeUndefined();
    expect(numberSetting('1433')).toBe(1433);
  });

  it.each([
    ['', undefined],
    ['   ', undefined],
    ['30', 30],
    [' 2.5 ', 2.5],
    ['30s', '30s'],
    ['5m', '5m'],
    ['1h30m', '1h30m'],
    ['1.', '1.'],
  ])('duration %p is %p', (typed, want) => {
    expect(durationSetting(typed)).toBe(want);
  });

  it('keeps one symbol server per non-blank line', () => {
    expect(symbolServersSetting(' https://a \n\n https://b\n')).toEqual(['https://a', 'https://b']);
    expect(symbolServersSetting('\n  \n')).toBeUndefined();
  });

  it('counts a secret as set when saved or typed', () => {
    expect(secretSet({ password: true }, {}, 'password')).toBe(true);
    expect(secretSet({}, { password: 'x' }, 'password')).toBe(true);
    expect(secretSet({ password: false }, { password: '' }, 'password')).toBe(false);
    expect(secretSet(undefined, undefined, 'clientSecret')).toBe(false);
  });

  it('names the user field after the authentication method', () => {
    expect(userField('sql', 'servicePrincipal').label).toBe('User');
    expect(userField('windows', 'managedIdentity').label).toBe('Kerberos principal');
    expect(userField('azuread', 'servicePrincipal').label).toBe('Client id');
    expect(userField('azuread', 'managedIdentity').label).toBe('Identity client id');
    expect(userField('azuread', 'managedIdentity').tooltip).toMatch(/^Optional/);
  });

  it('shows a health report as failed, incomplete or well', () => {
    expect(healthSeverity({ ok: false, missing: [] })).toBe('error');
    expect(healthSeverity({ ok: true, missing: ['VIEW SERVER STATE'] })).toBe('warning');
    expect(healthSeverity({ ok: true })).toBe('success');
    expect(serverFacts({ ok: true, message: '', target: 'db1:1433', version: '16.0', sysadmin: true })).toBe(
      'db1:1433 · SQL Server 16.0 · sysadmin'
    );
    expect(serverFacts({ ok: false, message: 'no' })).toBe('');
    expect([true, false].flatMap((g) => [true, false].map((r) => grantedText({ granted: g, required: r })))).toEqual([
      'yes',
      'yes',
      'no (required)',
      'no',
    ]);
  });
});
