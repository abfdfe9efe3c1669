export {
  StageJobPayload,
  FanoutPayload,
  fanoutEventIds,
  DeliveryPayload,
  deliveryIdsOf,
  stageQueueName,
  FANOUT_QUEUE,
  DELIVERY_QUEUE,
  ALL_QUEUE_NAMES,
  PRIORITY,
  QUEUE_CATALOG,
  jobKeys,
} from './catalog.ts'
export type { Priority, QueueCatalog, CatalogEntry, CatalogInput, QueueAddress, StageJobInput } from './catalog.ts'
export { deliveryOutboxRows, OUTBOX_CHANNEL, outbox, outboxRowsOf, outboxWriteCount } from './outbox-writer.ts'
export type { OutboxRowValues, OutboxWrite, OutboxWriters, EnqueueOptions } from './outbox-writer.ts'
export { createRedis, parseClusterUrl, watchRedisDown } from './connection.ts'
export type { ClusterUrl, RedisConnection } from './connection.ts'
export { createQueueSet } from './queue-set.ts'
export type { QueueSet } from './queue-set.ts'
export { dispatchOutboxRows, relayOutboxOnce, startOutboxRelay, pruneOutbox } from './outbox-relay.ts'
export type { OutboxRelay, OutboxRow } from './outbox-relay.ts'
export { DIRECT_DISPATCH_GRACE_MS, startDirectDispatch } from './direct-dispatch.ts'
export type { DirectDispatch } from './direct-dispatch.ts'
export { listenForOutbox } from './outbox-listener.ts'
export type { OutboxListenOptions } from './outbox-listener.ts'
export { outageTolerant } from './outage-tolerant.ts'
export type { Processor } from './outage-tolerant.ts'
export { drainWorkers, handBackOnCancel } from './drain.ts'
