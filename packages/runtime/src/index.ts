export { guardProcess, type GuardLog } from './process-guards.ts'
export { type Dependency, dependencyDown } from './dependency-down.ts'
