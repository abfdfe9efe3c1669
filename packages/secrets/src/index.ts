export { loadOrCreateDevKey, loadOrCreateSecretFile } from './dev-key.ts'
export { SECRET_LOG_REDACT_PATHS } from './log-redact.ts'
export {
  createSecretBox,
  ephemeralSecretBox,
  generateSecretKey,
  keyIdFor,
  openProcessSecretBox,
  parseSecretKey,
  SEALED_PREFIX,
  SecretBoxError,
} from './secret-box.ts'
export type { SecretBox, SecretKeys } from './secret-box.ts'
