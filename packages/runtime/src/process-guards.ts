/** The slice of a pino logger the guards need; any logger with `error` fits. */
export type GuardLog = { error(obj: object, msg: string): void }

/**
 * Last resort for errors that escape every handler: a library that throws from an async event listener (formidable
 * did, on one malformed multipart part) would otherwise end the process, and with it every request in flight. They
 * are logged, loudly, and the process keeps serving; a process that is truly broken is the supervisor's to restart.
 */
export function guardProcess(log: GuardLog, proc: NodeJS.Process = process): () => void {
  const onRejection = (reason: unknown) => log.error({ err: reason }, 'unhandled promise rejection (kept running)')
  const onException = (err: Error, origin: string) => log.error({ err, origin }, 'uncaught exception (kept running)')
  proc.on('unhandledRejection', onRejection)
  proc.on('uncaughtException', onException)
  return () => {
    proc.off('unhandledRejection', onRejection)
    proc.off('uncaughtException', onException)
  }
}
