// `npm start` as an operator runs it (scripts/dev/start.mjs, the real command behind it): it generates its admin
// token instead of using a fixed one, listens on loopback only, restarts an app that crashes (kill -9) with backoff
// while the others keep running, and Ctrl-C still stops everything. (Reliability items 6 and 7.)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractFetch } from './contract.ts'
import { freePort } from './stack.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
let start: ChildProcess
let out = ''
let port: number
let dataDir: string

const childPid = (app: string): number | undefined => {
  const list = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(start.pid)], { encoding: 'utf8' })
  const line = list.split('\n').find((l) => l.includes(`apps/${app}/src/main.ts`))
  return line ? Number(line.trim().split(/\s+/)[0]) : undefined
}

async function until<T>(what: string, fn: () => T | undefined | false, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${out.slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

beforeAll(async () => {
  const admin = process.env.TEST_DATABASE_ADMIN_URL!
  const name = `${process.env.QUIRE_TEST_DB_PREFIX ?? 'quire_test'}_supervision`
  const { default: pg } = await import('pg')
  const c = new pg.Client({ connectionString: admin })
  await c.connect()
  await c.query(`DROP DATABASE IF EXISTS "${name}"`)
  await c.query(`CREATE DATABASE "${name}"`)
  await c.end()
  const url = new URL(process.env.DATABASE_URL!)
  url.pathname = `/${name}`
  port = await freePort()
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'quire-start-'))
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'development',
    DATABASE_URL: url.toString(),
    QUIRE_API_PORT: String(port),
    QUIRE_QUEUE_PREFIX: `{sup${process.pid}}`,
    QUIRE_DATA_DIR: dataDir,
    QUIRE_DEMO_FILE: path.join(dataDir, 'demo.json'),
    QUIRE_BLOB_DIR: path.join(dataDir, 'blobs'),
    QUIRE_UPLOAD_DIR: path.join(dataDir, 'uploads'),
    QUIRE_SKIP_INSTALL: '1',
    QUIRE_SKIP_SEED: '1',
  }
  for (const k of ['QUIRE_ADMIN_TOKEN', 'QUIRE_HOST', 'QUIRE_API_HOST']) delete env[k]
  start = spawn(process.execPath, [path.join(ROOT, 'scripts', 'dev', 'start.mjs')], { cwd: ROOT, env })
  start.stdout!.on('data', (d) => {
    out += String(d)
  })
  start.stderr!.on('data', (d) => {
    out += String(d)
  })
  await until('the banner', () => out.includes('Quire is running'), 170_000)
}, 180_000)

afterAll(async () => {
  if (start && start.exitCode === null) {
    start.kill('SIGKILL')
  }
  rmSync(dataDir, { recursive: true, force: true })
})

describe('npm start', () => {
  it('generates its admin token under the data directory, prints it, and the admin API takes it', async () => {
    const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    expect(out).toContain(token)
    expect(out).not.toContain('dev-admin-token')
    const api = `http://127.0.0.1:${port}`
    const res = await contractFetch(api, '/admin/v1/workspaces/ws_none', {
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(404)
    const wrong = await contractFetch(api, '/admin/v1/workspaces/ws_none', {
      headers: { Authorization: 'Bearer dev-admin-token' },
    })
    expect(wrong.status).toBe(401)
  })

  it('listens on loopback only', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)
    expect(out).toContain('Listening:  127.0.0.1 only')
    if (external) {
      const refused = await fetch(`http://${external.address}:${port}/healthz`).then(
        () => false,
        () => true,
      )
      expect(refused).toBe(true)
    }
  })

  it('restarts a stage worker killed with -9, logs it, and the API keeps running', async () => {
    const api = await until('the api pid', () => childPid('api'))
    const worker = await until('the stage-worker pid', () => childPid('stage-worker'))
    process.kill(worker, 'SIGKILL')
    await until('the restart line', () => /stage-worker exited \(SIGKILL\); restarting it in 1 s/.test(out))
    const again = await until('a new stage worker', () => {
      const p = childPid('stage-worker')
      return p && p !== worker ? p : undefined
    })
    expect(again).not.toBe(worker)
    expect(childPid('api')).toBe(api)
    expect((await contractFetch(`http://127.0.0.1:${port}`, '/healthz')).status).toBe(200)
  })

  it('Ctrl-C stops every app', async () => {
    const pids = ['api', 'stage-worker', 'webhook-dispatcher'].map((a) => childPid(a)).filter(Boolean) as number[]
    expect(pids.length).toBe(3)
    const exited = new Promise((r) => start.once('exit', r))
    start.kill('SIGINT')
    await exited
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    await until('every app to exit', () => pids.every((p) => !alive(p)), 20_000)
  })
})
