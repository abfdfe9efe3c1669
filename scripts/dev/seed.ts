// Seeds one demo workspace per API form, with an all-scopes key, credits and a published invoice pipeline.
// Idempotent: keys are shown once, so the demo keys are kept in ./.data/demo.json and reused while their
// workspaces exist. Prints the demo set-up as JSON on stdout.
import fs from 'node:fs'
import path from 'node:path'
import {
  createApiKey,
  createPipeline,
  createWorkspace,
  ensurePlatformPipelines,
  publishPipelineVersion,
  updateWorkspace,
} from '@quire/core'
import { createPrisma } from '@quire/db'
import { SCOPES } from '@quire/domain'

type Demo = Record<'A' | 'B', { workspace_id: string; api_key: string; pipeline_id: string }>

const file = path.resolve(process.env.QUIRE_DEMO_FILE ?? './.data/demo.json')
const db = createPrisma(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/quire')

async function existing(): Promise<Demo | null> {
  if (!fs.existsSync(file)) return null
  const demo = JSON.parse(fs.readFileSync(file, 'utf8')) as Demo
  const found = await db.workspace.count({ where: { id: { in: [demo.A.workspace_id, demo.B.workspace_id] } } })
  return found === 2 ? demo : null
}

async function seedForm(form: 'A' | 'B') {
  const ws = await createWorkspace({ db, name: `Demo workspace (Form ${form})`, apiForm: form, credits: 10_000 })
  const pipeline = await createPipeline({
    db,
    workspaceId: ws.id,
    name: 'Invoices',
    definition: {
      document_types: [{ name: 'invoice', keywords: ['invoice', 'amount due', 'total due'], schema_id: 'invoice' }],
      routing: { catch_all_schema_id: 'generic' },
    },
  })
  await publishPipelineVersion({ db, workspaceId: ws.id, pipelineId: pipeline.id, version: 1 })
  await updateWorkspace({ db, workspaceId: ws.id, defaultPipelineId: pipeline.id })
  const key = await createApiKey({ db, workspaceId: ws.id, scopes: [...SCOPES] })
  return { workspace_id: ws.id, api_key: key.key, pipeline_id: pipeline.id }
}

await ensurePlatformPipelines(db)
let demo = await existing()
if (!demo) {
  demo = { A: await seedForm('A'), B: await seedForm('B') }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 })
}
console.log(JSON.stringify(demo))
await db.$disconnect()
