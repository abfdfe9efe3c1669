export { startHttpsReceiver } from './https-receiver.fixture.ts'
export type {
  HttpsReceiver,
  HttpsReceiverOptions,
  ReceivedRequest,
  ReceiverResponse,
} from './https-receiver.fixture.ts'
export { generateLocalhostCert } from './self-signed-cert.fixture.ts'
export type { SelfSignedCert } from './self-signed-cert.fixture.ts'
export { waitFor } from './wait-for.util.ts'
export type { WaitForOptions } from './wait-for.util.ts'
export { startS3Server } from './s3-server.fixture.ts'
export type { S3TestServer } from './s3-server.fixture.ts'
export { appNodeFlags } from './app-node-flags.ts'
export { openStoreFixture } from './store.fixture.ts'
export type { StoreFixture, StoreFixtureOptions } from './store.fixture.ts'
export { purchaseOrderPipeline } from './purchase-order-pipeline.ts'
