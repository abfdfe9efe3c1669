import { presentCursorPage } from '@quire/forms'
import { getBalance, listLedgerEntries } from '@quire/ledger'
import { z } from 'zod'
import { Balance, LedgerEntryList } from '../../openapi/resource-schemas.ts'
import { defineRoute } from '../route.ts'

export const LedgerQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).optional(),
  job_id: z.string().min(1).optional(),
  kind: z.enum(['grant', 'reserve', 'settle', 'release', 'void', 'expire']).optional(),
})

export const CREDIT_ROUTES = [
  defineRoute({
    method: 'get',
    path: '/v1/credits',
    operationId: 'getCredits',
    tag: 'Credits',
    summary: 'Credit balance',
    auth: 'key',
    scopes: ['credits:read'],
    responses: { '200': { description: 'The balance.', name: 'Balance', schema: Balance } },
    handle: async ({ deps, principal }) => ({ status: 200, body: await getBalance(deps.db, principal.workspaceId) }),
  }),
  defineRoute<z.output<typeof LedgerQuery>>({
    method: 'get',
    path: '/v1/credits/ledger',
    operationId: 'listLedgerEntries',
    tag: 'Credits',
    summary: 'Ledger entries',
    description: 'The workspace’s double-entry credit ledger, newest first, cursor-paginated like `GET /v1/jobs`.',
    auth: 'key',
    scopes: ['credits:read'],
    query: {
      schema: LedgerQuery,
      docs: {
        limit: 'Page size, 1..100.',
        cursor: '`page.next_cursor` of the previous page; omit for the first page.',
        job_id: 'Only entries of this job.',
        kind: 'Only entries of this kind.',
      },
    },
    responses: { '200': { description: 'One page of entries.', name: 'LedgerEntryList', schema: LedgerEntryList } },
    handle: async ({ deps, principal, query: q }) => {
      const page = await listLedgerEntries(deps.db, {
        workspaceId: principal.workspaceId,
        limit: q.limit,
        cursor: q.cursor,
        jobId: q.job_id,
        kind: q.kind,
      })
      return { status: 200, body: { data: page.data, page: presentCursorPage(page) } }
    },
  }),
]
