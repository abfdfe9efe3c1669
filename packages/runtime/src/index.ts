export { guardProcess, type GuardLog } from './process-guards.ts'
