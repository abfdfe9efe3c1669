import type { Tx } from '@quire/db'

export type OutboxMessage = {
  queue: string
  name: string
  jobKey: string
  payload: Record<string, unknown>
  priority?: number
  delayMs?: number
}

/**
 * Queue work is written to the outbox in the caller's transaction, so it commits (or not) together with the state
 * change that caused it. The relay moves it to BullMQ.
 */
export async function writeOutbox(tx: Tx, messages: OutboxMessage | OutboxMessage[]): Promise<void> {
  const list = Array.isArray(messages) ? messages : [messages]
  if (list.length === 0) return
  await tx.outboxMessage.createMany({
    data: list.map((m) => ({
      queue: m.queue,
      name: m.name,
      jobKey: m.jobKey,
      payload: m.payload as object,
      priority: m.priority ?? null,
      delayMs: m.delayMs ?? null,
    })),
  })
}
