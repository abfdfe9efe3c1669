import { createPipeline, createPipelineVersion, getPipeline, listPipelines, publishPipelineVersion } from '@quire/core'
import { DomainError, PipelineDefinition } from '@quire/domain'
import { NumberedPage, PipelineSchemas } from '@quire/forms'
import { z } from 'zod'
import { PageQuery, parseInput } from '../../http/validate.ts'
import { byForm, defineRoute } from '../route.ts'

export const CreatePipeline = z.object({ name: z.string().min(1).max(200), definition: PipelineDefinition.optional() })
export const CreateVersion = z.object({ definition: PipelineDefinition.optional() })

/**
 * The definition is documented by its schema but checked by the use-case, which answers INVALID_DEFINITION naming
 * each problem; the request envelope around it is checked here.
 */
const CreatePipelineEnvelope = CreatePipeline.extend({ definition: z.unknown().optional() })
const CreateVersionEnvelope = CreateVersion.extend({ definition: z.unknown().optional() })

const PAGE_LIST = 'Page-numbered: `page` ≥ 1 (default 1), `page_size` 1..100 (default 25).'
export const PAGE_DOCS: Record<string, string> = { page: 'Page number, from 1.', page_size: 'Items per page, 1..100.' }
const PIPELINE_ID = { id: 'Pipeline id.' }
const one = (description: string, status = '200') =>
  byForm({
    A: { [status]: { description, name: 'Pipeline', schema: PipelineSchemas.A.Pipeline } },
    B: { [status]: { description, name: 'Pipeline', schema: PipelineSchemas.B.Pipeline } },
  })

export const PIPELINE_ROUTES = [
  defineRoute({
    method: 'post',
    path: '/v1/pipelines',
    operationId: 'createPipeline',
    tag: 'Pipelines',
    summary: 'Create a pipeline',
    description: 'Creates the pipeline with version 1 as a draft; publish it before Form A submissions can use it.',
    auth: 'key',
    scopes: ['pipelines:write'],
    body: { kind: 'json', name: 'CreatePipelineRequest', schema: CreatePipeline, validate: 'handler' },
    responses: one('Created.', '201'),
    errors: ['INVALID_DEFINITION'],
    handle: async ({ deps, principal, profile, body: raw }) => {
      const body = parseInput(CreatePipelineEnvelope, raw)
      const p = await createPipeline({
        db: deps.db,
        workspaceId: principal.workspaceId,
        name: body.name,
        definition: body.definition ?? {},
      })
      return { status: 201, body: profile.presentPipeline(p) }
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/pipelines/{id}/versions',
    operationId: 'createPipelineVersion',
    tag: 'Pipelines',
    summary: 'Add a version',
    description: 'Adds the next version as a draft. Platform pipelines cannot be changed.',
    auth: 'key',
    scopes: ['pipelines:write'],
    pathParams: PIPELINE_ID,
    body: { kind: 'json', name: 'CreatePipelineVersionRequest', schema: CreateVersion, validate: 'handler' },
    responses: byForm({
      A: {
        '201': {
          description: 'Created.',
          name: 'PipelineVersionCreated',
          schema: PipelineSchemas.A.PipelineVersionCreated,
        },
      },
      B: {
        '201': {
          description: 'Created.',
          name: 'PipelineVersionCreated',
          schema: PipelineSchemas.B.PipelineVersionCreated,
        },
      },
    }),
    errors: ['INVALID_DEFINITION', 'PIPELINE_NOT_FOUND', 'not_found'],
    handle: async ({ deps, principal, profile, params, body: raw }) => {
      const body = parseInput(CreateVersionEnvelope, raw)
      const p = await createPipelineVersion({
        db: deps.db,
        workspaceId: principal.workspaceId,
        pipelineId: params.id!,
        definition: body.definition ?? {},
      })
      return {
        status: 201,
        body: { ...(profile.presentPipeline(p) as object), version: profile.presentVersion(p.version) },
      }
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/pipelines/{id}/versions/{n}/publish',
    operationId: 'publishPipelineVersion',
    tag: 'Pipelines',
    summary: 'Publish a version',
    description: byForm({
      A: 'Makes the version the latest published one.',
      B: 'Makes the version the latest published one; emits `pipeline.deployed`.',
    }),
    auth: 'key',
    scopes: ['pipelines:write'],
    pathParams: byForm({
      A: { ...PIPELINE_ID, n: 'Version: `v<n>` or `n`.' },
      B: { ...PIPELINE_ID, n: 'Version number `n`.' },
    }),
    responses: one('The pipeline.'),
    errors: ['PIPELINE_NOT_FOUND', 'VERSION_NOT_FOUND', 'not_found'],
    handle: async ({ deps, principal, profile, params }) => {
      const version = profile.parseVersion(params.n!)
      if (version === null) throw new DomainError('VERSION_NOT_FOUND', `no version ${params.n}`)
      const p = await publishPipelineVersion({
        db: deps.db,
        workspaceId: principal.workspaceId,
        pipelineId: params.id!,
        version,
      })
      return { status: 200, body: profile.presentPipeline(p) }
    },
  }),
  defineRoute<z.output<typeof PageQuery>>({
    method: 'get',
    path: '/v1/pipelines',
    operationId: 'listPipelines',
    tag: 'Pipelines',
    summary: 'List pipelines',
    description: `The workspace’s pipelines and the platform ones. ${PAGE_LIST}`,
    auth: 'key',
    scopes: ['pipelines:read'],
    query: { schema: PageQuery, docs: PAGE_DOCS },
    responses: byForm({
      A: {
        '200': {
          description: 'One page.',
          name: 'PipelineList',
          schema: z.object({ data: z.array(PipelineSchemas.A.Pipeline), page: NumberedPage }),
        },
      },
      B: {
        '200': {
          description: 'One page.',
          name: 'PipelineList',
          schema: z.object({ data: z.array(PipelineSchemas.B.Pipeline), page: NumberedPage }),
        },
      },
    }),
    handle: async ({ deps, principal, profile, query: q }) => {
      const res = await listPipelines({
        db: deps.db,
        workspaceId: principal.workspaceId,
        page: q.page,
        pageSize: q.page_size,
      })
      return {
        status: 200,
        body: {
          data: res.data.map((p) => profile.presentPipeline(p)),
          page: { page: q.page, page_size: q.page_size, total: res.total },
        },
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/pipelines/{id}',
    operationId: 'getPipeline',
    tag: 'Pipelines',
    summary: 'Read a pipeline',
    auth: 'key',
    scopes: ['pipelines:read'],
    pathParams: PIPELINE_ID,
    responses: one('The pipeline.'),
    errors: ['PIPELINE_NOT_FOUND'],
    handle: async ({ deps, principal, profile, params }) => {
      const p = await getPipeline({ db: deps.db, workspaceId: principal.workspaceId, pipelineId: params.id! })
      return { status: 200, body: profile.presentPipeline(p) }
    },
  }),
]
