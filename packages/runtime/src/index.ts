export { guardProcess, type GuardLog } from './process-guards.ts'
export { DEPENDENCY_MARK, type Dependency, dependencyDown } from './dependency-down.ts'
