// The tedious client suite: Microsoft's Node driver against the stand-in (or
// a real server). Run by TestTediousSuite (clients_node_test.go) as
//   node tedious_suite.js
// with the target in environment variables (never arguments, never
// printed): QR_HOST, QR_PORT, QR_USER, QR_PASSWORD, QR_DATABASE; the TLS
// settings QR_ENCRYPT (disable, false, true or strict, go-mssqldb's
// encrypt values), QR_TRUST_SERVER_CERT (1/0), QR_CA_FILE (the CA that
// issued the server certificate) and QR_HOSTNAME (the name the certificate
// carries, if not QR_HOST). The Go test fills them from
// QUERYREPLAY_TEST_DSN, or from the stand-in it started.
// QR_REAL=1 (a real server) skips, with a message, the cases only the
// stand-in guarantees (its demo database, its private CA) and runs the
// TLS-mode cases the DSN's settings allow.
// Prints one line per case ("ok <name>" / "skip <name>: why") and exits 1
// at the first failure with the reason.
'use strict';

const fs = require('fs');
const { Connection, Request, TYPES, ISOLATION_LEVEL } = require('tedious');

const env = process.env;
const real = env.QR_REAL === '1';
const ca = env.QR_CA_FILE ? fs.readFileSync(env.QR_CA_FILE) : undefined;
const dsnEncrypt = env.QR_ENCRYPT || 'true';
const standinOnly = (why) => (real ? `stand-in only: ${why}` : undefined);

function config(extra) {
  const options = { port: Number(env.QR_PORT), database: env.QR_DATABASE, encrypt: false, connectTimeout: 10000, requestTimeout: 15000 };
  if (env.QR_HOSTNAME) {
    options.serverName = env.QR_HOSTNAME;
  }
  return {
    server: env.QR_HOST || '127.0.0.1',
    authentication: { type: 'default', options: { userName: env.QR_USER, password: env.QR_PASSWORD } },
    options: Object.assign(options, extra || {}),
  };
}

// dsnTLS is the TLS the DSN asks for (the stand-in: encrypted, trusted).
function dsnTLS() {
  if (!real) {
    return { encrypt: true, trustServerCertificate: true };
  }
  const tls = { encrypt: { disable: false, false: false, true: true, strict: 'strict' }[dsnEncrypt] };
  tls.trustServerCertificate = env.QR_TRUST_SERVER_CERT === '1';
  if (ca) {
    tls.cryptoCredentialsDetails = { ca };
  }
  return tls;
}

function connect(extra) {
  return new Promise((resolve, reject) => {
    const conn = new Connection(config(extra));
    const messages = [];
    conn.on('errorMessage', (m) => messages.push(m));
    conn.connect((err) => {
      if (err) {
        err.serverMessages = messages;
        reject(err);
      } else {
        resolve(conn);
      }
    });
  });
}

// run executes sql (batch, or sp_executesql when params are given) and
// collects result sets, info messages, return values and the error.
function run(conn, sql, params, opts) {
  opts = opts || {};
  return new Promise((resolve) => {
    const out = { sets: [], infos: [], returns: {}, error: null };
    const req = new Request(sql, (err, rowCount) => {
      out.error = err || null;
      out.rowCount = rowCount;
      resolve(out);
    });
    req.on('columnMetadata', () => out.sets.push([]));
    req.on('row', (cols) => {
      out.sets[out.sets.length - 1].push(cols.map((c) => c.value));
      if (opts.onRow) {
        opts.onRow(out, req);
      }
    });
    req.on('returnValue', (name, value) => {
      out.returns[name] = value;
    });
    conn.on('infoMessage', (m) => out.infos.push(m));
    for (const p of params || []) {
      if (p.output) {
        req.addOutputParameter(p.name, p.type);
      } else {
        req.addParameter(p.name, p.type, p.value);
      }
    }
    if (params) {
      conn.execSql(req);
    } else {
      conn.execSqlBatch(req);
    }
  });
}

function call(fn) {
  return new Promise((resolve, reject) => fn((err, ...rest) => (err ? reject(err) : resolve(rest))));
}

function check(cond, what) {
  if (!cond) {
    throw new Error(what);
  }
}

const cases = [];
function test(name, fn) {
  cases.push({ name, fn });
}

test('login without TLS', async () => {
  if (real && dsnEncrypt !== 'disable' && dsnEncrypt !== 'false') {
    return `the DSN asks for encrypt=${dsnEncrypt}`;
  }
  const c = await connect({ encrypt: false });
  const r = await run(c, 'SELECT 1 AS one');
  check(!r.error && r.sets[0][0][0] === 1, `SELECT 1: ${r.error}`);
  c.close();
});

test('login with TLS, trustServerCertificate', async () => {
  if (real && dsnEncrypt === 'disable') {
    return 'the DSN says encrypt=disable';
  }
  const c = await connect({ encrypt: true, trustServerCertificate: true });
  const r = await run(c, 'SELECT 2');
  check(!r.error && r.sets[0][0][0] === 2, `SELECT 2 over TLS: ${r.error}`);
  c.close();
});

test('login with TLS, CA pinned', async () => {
  if (!ca) {
    return 'no QR_CA_FILE';
  }
  const c = await connect({ encrypt: true, trustServerCertificate: false, cryptoCredentialsDetails: { ca } });
  const r = await run(c, 'SELECT 3');
  check(!r.error && r.sets[0][0][0] === 3, `SELECT 3 over verified TLS: ${r.error}`);
  c.close();
});

test('login with TLS, unverifiable certificate refused', async () => {
  if (real) {
    return standinOnly("needs a certificate from a private CA (a real server's may be publicly trusted)");
  }
  if (!ca) {
    return 'no QR_CA_FILE';
  }
  let failed = false;
  try {
    const c = await connect({ encrypt: true, trustServerCertificate: false });
    c.close();
  } catch (e) {
    failed = /certificate/i.test(String(e.message) + String(e.cause && e.cause.message));
  }
  check(failed, 'a certificate from an unknown CA was accepted');
});

test('login TDS 8.0 strict, CA pinned', async () => {
  if (real && dsnEncrypt !== 'strict') {
    return `the DSN asks for encrypt=${dsnEncrypt}, not strict`;
  }
  if (!ca) {
    return 'no QR_CA_FILE';
  }
  const c = await connect({ encrypt: 'strict', cryptoCredentialsDetails: { ca } });
  const r = await run(c, 'SELECT 8');
  check(!r.error && r.sets[0][0][0] === 8, `SELECT 8 over TDS 8.0: ${r.error}`);
  c.close();
});

test('login to a missing database: 4060 then 18456', async () => {
  try {
    const c = await connect(Object.assign(dsnTLS(), { database: 'NoSuchDB' }));
    c.close();
  } catch (e) {
    const nums = (e.serverMessages || []).map((m) => m.number);
    check(nums.join(',') === '4060,18456', `server messages ${nums.join(',')}, want 4060,18456`);
    return undefined;
  }
  throw new Error('login to a missing database succeeded');
});

let conn;

test('batch with several result sets', async () => {
  const r = await run(conn, "SELECT 1 AS a; SELECT N'two' AS b, 3 AS c");
  check(!r.error && r.sets.length === 2, `sets ${r.sets.length}: ${r.error}`);
  check(r.sets[1][0][0] === 'two' && r.sets[1][0][1] === 3, `second set ${JSON.stringify(r.sets[1])}`);
});

test('RPC typed and output parameters', async () => {
  const r = await run(conn, "SET @out = @n * 2; SET @s2 = @s + N'!'", [
    { name: 'n', type: TYPES.Int, value: 21 },
    { name: 's', type: TYPES.NVarChar, value: 'héllo ☃' },
    { name: 'out', type: TYPES.Int, output: true },
    { name: 's2', type: TYPES.NVarChar, output: true },
  ]);
  check(!r.error, `error ${r.error}`);
  check(r.returns.out === 42 && r.returns.s2 === 'héllo ☃!', `return values ${JSON.stringify(r.returns)}`);
});

test('prepared statements', async () => {
  const results = [];
  const req = new Request('SELECT @a * @b AS product', () => {});
  req.addParameter('a', TYPES.Int);
  req.addParameter('b', TYPES.Int);
  await new Promise((resolve, reject) => {
    req.once('prepared', resolve);
    req.once('error', reject);
    conn.prepare(req);
  });
  check(req.handle > 0, `handle ${req.handle}`);
  for (const [a, b] of [
    [6, 7],
    [3, 5],
  ]) {
    await new Promise((resolve, reject) => {
      const onRow = (cols) => results.push(cols[0].value);
      req.on('row', onRow);
      req.once('requestCompleted', () => {
        req.removeListener('row', onRow);
        resolve();
      });
      req.once('error', reject);
      conn.execute(req, { a, b });
    });
  }
  check(results.join(',') === '42,15', `products ${results}`);
  await new Promise((resolve) => {
    req.once('requestCompleted', resolve);
    conn.unprepare(req);
  });
});

test('named transaction (TM name is a byte count)', async () => {
  await call((cb) => conn.beginTransaction(cb, 'tran_named', ISOLATION_LEVEL.READ_COMMITTED));
  let r = await run(conn, 'SELECT @@TRANCOUNT');
  check(r.sets[0][0][0] === 1, `@@TRANCOUNT ${r.sets[0][0][0]}`);
  await call((cb) => conn.saveTransaction(cb, 'sp_one'));
  await call((cb) => conn.rollbackTransaction(cb, 'sp_one'));
  r = await run(conn, 'SELECT @@TRANCOUNT');
  check(r.sets[0][0][0] === 1, `rollback to savepoint ended the transaction (@@TRANCOUNT ${r.sets[0][0][0]})`);
  await call((cb) => conn.commitTransaction(cb, 'tran_named'));
  r = await run(conn, 'SELECT @@TRANCOUNT');
  check(r.sets[0][0][0] === 0, `after commit @@TRANCOUNT ${r.sets[0][0][0]}`);
});

test('nested transactions with the transaction() helper', async () => {
  await new Promise((resolve, reject) => {
    conn.transaction((err, outerDone) => {
      if (err) {
        return reject(err);
      }
      conn.transaction((err2, innerDone) => {
        if (err2) {
          return reject(err2);
        }
        // the inner one is a savepoint: rolling it back keeps the outer
        innerDone(new Error('roll back the inner transaction'), (rbErr) => {
          if (rbErr && !/roll back the inner/.test(rbErr.message)) {
            return reject(rbErr);
          }
          run(conn, 'SELECT @@TRANCOUNT').then((r) => {
            if (r.sets[0][0][0] !== 1) {
              return reject(new Error(`outer transaction lost: @@TRANCOUNT ${r.sets[0][0][0]}`));
            }
            outerDone(null, (cErr) => (cErr ? reject(cErr) : resolve()));
          });
        });
      });
    });
  });
});

test('errors and messages with numbers, states and lines', async () => {
  const r = await run(conn, "PRINT N'hello from PRINT'\nSELECT 1 AS x\nSELECT 1/0");
  check(r.infos.some((m) => /hello from PRINT/.test(m.message)), `info messages ${JSON.stringify(r.infos.map((m) => m.message))}`);
  const e = r.error;
  check(e && e.number === 8134 && e.class === 16 && e.state === 1 && e.lineNumber === 3, `error ${e && [e.number, e.class, e.state, e.lineNumber]}`);
});

test('large values', async () => {
  const big = 'QueryReplay ☃ '.repeat(20000);
  const blob = Buffer.alloc(200000, 0xab);
  const r = await run(conn, 'SELECT CAST(@s AS nvarchar(max)), CAST(@b AS varbinary(max))', [
    { name: 's', type: TYPES.NVarChar, value: big },
    { name: 'b', type: TYPES.VarBinary, value: blob },
  ]);
  check(!r.error, `error ${r.error}`);
  check(r.sets[0][0][0] === big && Buffer.compare(r.sets[0][0][1], blob) === 0, 'large values came back changed');
});

test('demo schema types', async () => {
  if (real) {
    return standinOnly('needs the demo database');
  }
  const r = await run(conn, 'SELECT TOP 1 o.OrderID, c.Name, o.OrderDate, o.Amount FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID ORDER BY o.OrderID');
  check(!r.error, `error ${r.error}`);
  const [id, name, date, amount] = r.sets[0][0];
  check(id === 1 && typeof name === 'string' && date instanceof Date && typeof amount === 'number', `row ${JSON.stringify(r.sets[0][0])}`);
});

test('cancel during a long result', async () => {
  if (real) {
    return standinOnly('needs the demo database');
  }
  let cancelledAt = 0;
  let rows = 0;
  const r = await run(conn, 'SELECT a.CustomerID FROM dbo.Customers a CROSS JOIN dbo.Products b', undefined, {
    onRow: () => {
      if (++rows === 1000) {
        cancelledAt = Date.now();
        conn.cancel();
      }
    },
  });
  // from the cancel to the callback: the acknowledgement, not the query's start-up
  const took = Date.now() - cancelledAt;
  check(r.error && r.error.code === 'ECANCEL', `error ${r.error && r.error.code}: ${r.error}`);
  check(cancelledAt > 0 && took < 5000, `cancel took ${took} ms (tedious' cancel timeout is 5 s)`);
  const after = await run(conn, 'SELECT 1');
  check(!after.error && after.sets[0][0][0] === 1, `connection after cancel: ${after.error}`);
});

(async () => {
  let failed = false;
  for (const c of cases) {
    try {
      if (c.name === 'batch with several result sets') {
        conn = await connect(dsnTLS());
      }
      const skip = await c.fn();
      console.log(skip ? `skip ${c.name}: ${skip}` : `ok ${c.name}`);
    } catch (e) {
      console.log(`FAIL ${c.name}: ${e && e.stack ? e.stack : e}`);
      failed = true;
      break;
    }
  }
  if (conn) {
    conn.close();
  }
  process.exit(failed ? 1 : 0);
})();
