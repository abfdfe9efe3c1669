#!/usr/bin/env node
// @ts-check
// Stand-in for Prisma's native `schema-engine` binary, built on @prisma/schema-engine-wasm and
// @prisma/adapter-pg. The Prisma CLI downloads the native binary from binaries.prisma.sh, which is
// unreachable offline; with PRISMA_SCHEMA_ENGINE_BINARY pointing here it spawns this file instead.
//
// Speaks the native binary's protocol (checked against prisma 7.10.1 build/cli.js):
//   schema-engine --version
//   schema-engine --datasource '{"url":...}' cli can-connect-to-database|create-database|drop-database
//   schema-engine [--datamodels <file>]... [--datasource '{"url":...,"shadowDatabaseUrl":...}']
//     -> line-delimited JSON-RPC 2.0 on stdin/stdout; each method maps onto the wasm SchemaEngine
//        method of the same name. `diff` output goes back through the engine's `print` request.
// In cli mode errors go to stderr as JSON log lines (first line is skipped by the CLI) and the
// process exits 1; the CLI looks for {level:"ERROR", target:"schema_engine::logger", fields:{error_code, message}}.
//
// Works around two adapter-pg 7.10.1 problems (see STACK-NOTES §3):
//  1. pg's internal "char" type (OID 18) returned by catalog queries cannot be decoded -> rewritten to text.
//  2. PrismaPg.connectToShadowDb() targets the main DB when given a connectionString -> own shadow factory.
// It also runs migration scripts as one simple-protocol query (as the native engine does) instead of
// adapter-pg's naive split on ';'.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import readline from 'node:readline'
import { randomUUID } from 'node:crypto'

const require = createRequire(import.meta.url)
const DEBUG = !!process.env.QUIRE_SCHEMA_SHIM_DEBUG

function debug(...args) {
  if (DEBUG) process.stderr.write(`[schema-engine-shim] ${args.map(String).join(' ')}\n`)
}

// ---------- argument parsing ----------
const argv = process.argv.slice(2)
const datamodelPaths = []
let datasource = null
let cliCommand = null
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]
  if (a === '--datamodels') datamodelPaths.push(argv[++i])
  else if (a === '--datasource') datasource = JSON.parse(argv[++i])
  else if (a === '--enabled-preview-features' || a === '--extension-types') i++
  else if (a === '--version' || a === '-V') cliCommand = '--version'
  else if (a === 'cli') cliCommand = argv[++i]
}

// ---------- wasm + pg loading ----------
async function loadWasm() {
  // schema_engine.js does `import * as wasm from "./schema_engine_bg.wasm"`, which Node 20 cannot
  // load without --experimental-wasm-modules; instantiate the module by hand instead.
  const bgPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')
  const bg = await import('@prisma/schema-engine-wasm/schema_engine_bg')
  const bytes = readFileSync(path.join(path.dirname(bgPath), 'schema_engine_bg.wasm'))
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg })
  const exports = /** @type {any} */ (instance.exports)
  bg.__wbg_set_wasm(exports)
  exports.__wbindgen_start()
  return bg
}

function loadPg() {
  const pg = require('pg')
  const Result = require('pg/lib/result.js')
  if (!Result.prototype.__quireCharPatch) {
    const addFields = Result.prototype.addFields
    Result.prototype.addFields = function (fields) {
      for (const f of fields) if (f.dataTypeID === 18) f.dataTypeID = 25 // "char" -> text
      return addFields.call(this, fields)
    }
    Result.prototype.__quireCharPatch = true
  }
  return pg
}

// ---------- URL helpers ----------
/** Split `?schema=` off a postgres URL: pg ignores it, Prisma uses it as the default schema. */
function parseUrl(url) {
  const u = new URL(url)
  const schema = u.searchParams.get('schema') || undefined
  u.searchParams.delete('schema')
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || u.username || 'postgres'
  return { connectionString: u.toString(), schema, database, host: u.hostname || 'localhost', port: u.port || '5432' }
}

function poolConfig(url) {
  const { connectionString, schema } = parseUrl(url)
  const cfg = { connectionString, max: 4 }
  if (schema) cfg.options = `-c search_path="${schema.replace(/"/g, '""')}"`
  return cfg
}

function withDatabase(url, database) {
  const u = new URL(url)
  u.pathname = `/${encodeURIComponent(database)}`
  return u.toString()
}

const quoteIdent = (s) => `"${String(s).replace(/"/g, '""')}"`

/** Run `fn(client)` against the server's maintenance database (postgres, else template1). */
async function withMaintenanceClient(url, fn) {
  const pg = loadPg()
  let lastErr
  for (const db of ['postgres', 'template1']) {
    const client = new pg.Client({ connectionString: parseUrl(withDatabase(url, db)).connectionString })
    try {
      await client.connect()
    } catch (e) {
      lastErr = e
      await client.end().catch(() => {})
      if (e && e.code === '3D000') continue
      throw e
    }
    try {
      return await fn(client)
    } finally {
      await client.end().catch(() => {})
    }
  }
  throw lastErr
}

async function createDatabase(url) {
  const { database } = parseUrl(url)
  await withMaintenanceClient(url, (c) => c.query(`CREATE DATABASE ${quoteIdent(database)}`))
  return database
}

async function dropDatabase(url) {
  const { database } = parseUrl(url)
  await withMaintenanceClient(url, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`))
  return database
}

/** Map a pg / socket error to the Prisma error code the native engine would report. */
function userFacing(err, url) {
  const { database, host, port } = url ? parseUrl(url) : { database: '?', host: '?', port: '?' }
  const code = err?.code
  if (code === '3D000')
    return {
      error_code: 'P1003',
      message: `Database \`${database}\` does not exist on the database server at \`${host}:${port}\`.`,
    }
  if (code === '28P01' || code === '28000')
    return {
      error_code: 'P1000',
      message: `Authentication failed against database server at \`${host}:${port}\`: ${err.message}`,
    }
  if (code === '42P04')
    return {
      error_code: 'P1009',
      message: `Database \`${database}\` already exists on the database server at \`${host}:${port}\``,
    }
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET'].includes(code))
    return {
      error_code: 'P1001',
      message: `Can't reach database server at \`${host}:${port}\`\n\nPlease make sure your database server is running at \`${host}:${port}\`.`,
    }
  return { error_code: 'P1001', message: String(err?.message || err) }
}

// ---------- `--version` and `cli ...` ----------
function logLine(level, fields) {
  return JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target: 'schema_engine::logger' })
}

async function runCli(command) {
  if (command === '--version') {
    const bg = await loadWasm()
    process.stdout.write(`schema-engine-cli ${bg.version()}\n`)
    return 0
  }
  const url = datasource?.url
  if (!url) {
    process.stderr.write(
      `schema-engine-shim: missing --datasource url\n${logLine('ERROR', { message: 'Missing datasource url', error_code: 'P1012' })}`,
    )
    return 1
  }
  try {
    if (command === 'can-connect-to-database') {
      const pg = loadPg()
      const client = new pg.Client({ connectionString: parseUrl(url).connectionString })
      try {
        await client.connect()
        await client.query('SELECT 1')
      } finally {
        await client.end().catch(() => {})
      }
      process.stdout.write('Connection successful\n')
    } else if (command === 'create-database') {
      const db = await createDatabase(url)
      process.stdout.write(`Database '${db}' was successfully created.\n`)
    } else if (command === 'drop-database') {
      const db = await dropDatabase(url)
      process.stdout.write(`The database '${db}' was successfully dropped.\n`)
    } else {
      throw Object.assign(new Error(`Unknown cli command: ${command}`), { code: 'EUNKNOWN' })
    }
    return 0
  } catch (e) {
    // The CLI skips stderr's first line and parses every other line as JSON (no trailing newline).
    process.stderr.write(`schema-engine-shim: ${command} failed\n${logLine('ERROR', userFacing(e, url))}`)
    return 1
  }
}

// ---------- adapter factory (own shadow DB handling) ----------
function makeAdapterFactory(ds) {
  const pg = loadPg()
  // Imported lazily so `--version` / `cli` stay light.
  return import('@prisma/adapter-pg').then(({ PrismaPg }) => {
    const open = async (url, release) => {
      const { schema } = parseUrl(url)
      const adapter = await new PrismaPg(poolConfig(url), schema ? { schema } : undefined).connect()
      // The native engine sends a whole migration as one simple-protocol query (an implicit
      // transaction); adapter-pg would split it on every ';', breaking $$-quoted bodies.
      adapter.executeScript = async (script) => {
        try {
          await adapter.underlyingDriver().query(script)
        } catch (e) {
          // onError is protected in adapter-pg's types; its own executeScript calls it the same way.
          const raw = /** @type {any} */ (adapter)
          raw.onError(e)
        }
      }
      if (release) {
        const dispose = adapter.dispose.bind(adapter)
        adapter.dispose = async () => {
          await dispose()
          await release()
        }
      }
      return adapter
    }
    return {
      provider: 'postgres',
      adapterName: '@prisma/adapter-pg',
      connect: () => open(ds.url),
      async connectToShadowDb() {
        if (ds.shadowDatabaseUrl) return open(ds.shadowDatabaseUrl)
        const name = `prisma_migrate_shadow_db_${randomUUID()}`
        const admin = new pg.Client({ connectionString: parseUrl(ds.url).connectionString })
        await admin.connect()
        try {
          await admin.query(`CREATE DATABASE ${quoteIdent(name)}`)
        } finally {
          await admin.end().catch(() => {})
        }
        // Dispose ends the pool first, then drops; WITH (FORCE) covers stray sessions.
        return open(withDatabase(ds.url, name), async () => {
          await withMaintenanceClient(ds.url, (c) =>
            c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
          ).catch((e) => debug('shadow drop failed', e.message))
        })
      },
    }
  })
}

// ---------- JSON-RPC server ----------
async function runRpc() {
  const { bindMigrationAwareSqlAdapterFactory } = await import('@prisma/driver-adapter-utils')
  const bg = await loadWasm()
  const datamodels = datamodelPaths.length ? datamodelPaths.map((p) => [p, readFileSync(p, 'utf8')]) : undefined
  let engine = null
  let bound = null
  let printSeq = 0

  const send = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`)

  async function getEngine() {
    if (engine) return engine
    if (!datasource?.url)
      throw Object.assign(new Error('The datasource url is not set (prisma.config.ts)'), { code: 'P1012' })
    bound = bindMigrationAwareSqlAdapterFactory(/** @type {any} */ (await makeAdapterFactory(datasource)))
    const log = (line) => debug('engine:', line)
    try {
      engine = await bg.SchemaEngine.new(/** @type {any} */ ({ datamodels }), log, bound)
    } catch (e) {
      throw resolveError(e)
    }
    return engine
  }

  /** Replace adapter errors registered as GenericJs by the original JS error. */
  function resolveError(e) {
    if (e?.cause && e.cause.kind === 'GenericJs' && bound) {
      const orig = bound.errorRegistry.consumeError(e.cause.id)
      if (orig) return orig.error
    }
    return e
  }

  function toRpcError(e) {
    e = resolveError(e)
    const isPanic = e instanceof WebAssembly.RuntimeError || (e && e.name === 'RuntimeError')
    const data = { is_panic: isPanic, message: String(e?.message || e), meta: e?.meta || null }
    if (e && typeof e.code === 'string' && /^P\d{4}$/.test(e.code)) data.error_code = e.code
    else if (e?.code && typeof e.code === 'string') Object.assign(data, userFacing(e, datasource?.url))
    else if (e?.cause && typeof e.cause === 'object' && e.cause.kind) {
      const k = e.cause
      if (k.kind === 'DatabaseNotReachable') Object.assign(data, userFacing({ code: 'ECONNREFUSED' }, datasource?.url))
      else if (k.kind === 'DatabaseDoesNotExist') Object.assign(data, userFacing({ code: '3D000' }, datasource?.url))
      else if (k.kind === 'AuthenticationFailed')
        Object.assign(data, userFacing({ code: '28P01', message: 'authentication failed' }, datasource?.url))
      else data.message = `${data.message} (${JSON.stringify(k)})`
    }
    return { code: 4466, message: 'An error happened. Check the data field for details.', data }
  }

  async function handle(req) {
    const p = req.params ?? {}
    switch (req.method) {
      case 'createDatabase': {
        const url = p.datasource && p.datasource.tag === 'ConnectionString' ? p.datasource.url : datasource?.url
        return { databaseName: await createDatabase(url) }
      }
      case 'getDatabaseVersion':
        return (await getEngine()).version(req.params ?? null)
      case 'diff': {
        const { stdout, ...rest } = await (await getEngine()).diff(p)
        if (stdout)
          send({
            jsonrpc: '2.0',
            id: `print-${++printSeq}`,
            method: 'print',
            params: { content: stdout.replace(/\n$/, '') },
          })
        return rest
      }
      case 'introspect':
        return (await getEngine()).introspect({ namespaces: null, compositeTypeDepth: -1, force: false, ...p })
      case 'debugPanic':
        return (await getEngine()).debugPanic()
      default: {
        const eng = await getEngine()
        if (typeof eng[req.method] !== 'function' || req.method === 'free' || req.method === 'constructor')
          throw Object.assign(new Error(`Method not supported by the wasm schema engine shim: ${req.method}`), {
            code: 'P1012',
          })
        // Keep the call on the instance: extracting the method breaks the wasm binding.
        return eng[req.method](p)
      }
    }
  }

  let chain = Promise.resolve()
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  rl.on('line', (line) => {
    if (!line.trim()) return
    let req
    try {
      req = JSON.parse(line)
    } catch {
      debug('unparsable input', line)
      return
    }
    if (!req.method) return // ack of our `print` request
    debug('->', req.method)
    chain = chain.then(async () => {
      try {
        const result = await handle(req)
        send({ jsonrpc: '2.0', id: req.id, result: result === undefined ? null : result })
      } catch (e) {
        debug('error', e?.stack)
        send({ jsonrpc: '2.0', id: req.id, error: toRpcError(e) })
      }
    })
  })
  rl.on('close', () => {
    chain.then(() => {
      try {
        engine?.free()
      } catch {}
      process.exit(0)
    })
  })
}

if (cliCommand) {
  runCli(cliCommand).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`${String(e?.stack || e)}\n`)
      process.exit(1)
    },
  )
} else {
  runRpc().catch((e) => {
    process.stderr.write(`${String(e?.stack || e)}\n`)
    process.exit(1)
  })
}
