/**
 * Error text a client will read (a job's or document's error message). Quire's own faults are described plainly,
 * with where to look (the job id is in the service's log lines); library text that names internals (database
 * client errors, server file paths, stack frames) never reaches the client.
 */
const INTERNAL = /prisma|invocation|\bSQL\b|ECONN|ETIMEDOUT|\bat .+:\d+:\d+|node_modules/i
// An absolute path of two or more segments, as Node and native libraries print them ('/tmp/quire-x/abc.pdf').
const ABSOLUTE_PATH = /(?<![\w.:/])\/(?:[\w.@+-]+\/)+[\w.@+-]*/g
const MAX = 2000

export function internalErrorMessage(stage: string): string {
  return `internal error in the ${stage} stage; the service's logs have the details under this job's id`
}

/**
 * `message` with paths removed and at most 2000 characters; text that names internals becomes the stage's plain one.
 */
export function clientMessage(message: string, stage: string): string {
  if (INTERNAL.test(message)) return internalErrorMessage(stage)
  return message.replace(ABSOLUTE_PATH, '<file>').slice(0, MAX)
}
