import pg from 'pg'

/**
 * pg's Pool, except that a statement PostgreSQL refused leaves its connection in the pool.
 *
 * `pg.Pool#query` hands the connection back with the error, and the pool closes every connection handed back with
 * an error. That is right for a broken connection, but a refused statement (a unique or CHECK violation, a text
 * jsonb refuses) leaves the connection as healthy as before: in autocommit PostgreSQL has already ended the
 * statement's transaction. Closing it cost about 30 ms on the next query (a new connection,
 * a new backend process, every prepared statement prepared again) and turned a burst of refused submissions into a
 * burst of reconnections. Errors without a SQLSTATE (the socket, a timeout) and FATAL ones still close it.
 *
 * And a connection that fails while it is being made is marked as PostgreSQL's, whoever asked for it.
 */
export class Pool extends pg.Pool {
  /**
   * pg.Pool#connect, except that a failure to make the connection (the server resetting it mid-handshake as it stops
   * or starts) is marked as PostgreSQL's, as one that breaks mid-query is: every checkout in promise form goes
   * through here (pooled statements, direct transactions, Prisma's transactions). The callback form, which pg's own
   * `query` uses, passes through as it is.
   */
  override connect(): Promise<pg.PoolClient>
  override connect(callback: ConnectCallback): void
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    if (callback) {
      super.connect(callback)
      return
    }
    return super.connect().catch((err: unknown) => {
      markPostgresqlSocketError(err)
      throw err
    })
  }

  // pg.Pool#query's overloads, passed through as they are.
  override query(...args: any[]): any {
    const [config, values, callback] = args
    if (typeof values === 'function' || typeof callback === 'function' || typeof config?.submit === 'function') {
      // Callback forms and Submittables (cursors, streams) keep pg's own handling.
      return (super.query as (...a: unknown[]) => unknown)(...args)
    }
    return this.queryKeepingConnection(config, values)
  }

  private async queryKeepingConnection(config: unknown, values: unknown): Promise<pg.QueryResult> {
    const client = await this.connect()
    // As pg.Pool#query does: a connection that breaks mid-query fails the query and also emits 'error' on the
    // client, which a checked-out client has no listener for (the pool listens only while it is idle); unheard, that
    // event is an uncaught exception. The query's own rejection carries the error.
    client.on('error', ignoreClientError)
    try {
      const result = await client.query(config as pg.QueryConfig, values as unknown[] | undefined)
      client.removeListener('error', ignoreClientError)
      client.release()
      return result
    } catch (err) {
      client.removeListener('error', ignoreClientError)
      client.release(statementOnly(err) ? undefined : (err as Error))
      markPostgresqlSocketError(err)
      throw err
    }
  }
}

/** pg.Pool#connect's callback form. */
type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: any) => void,
) => void

/** An error PostgreSQL reported for the statement alone: the connection stays usable. */
function statementOnly(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity !== 'FATAL' && err.severity !== 'PANIC'
}

/** Errors of the connection's socket: the PostgreSQL connection broke (the server, or the network to it). */
const SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED'])

/**
 * Marks a socket error as PostgreSQL's (`@quire/runtime` dependencyDown reads the mark): a bare `read ECONNRESET`
 * says nothing of whose socket it was, so a worker would otherwise count it as a failed attempt instead of waiting
 * for the database. The symbol is the global one `DEPENDENCY_MARK` names.
 */
export function markPostgresqlSocketError(err: unknown) {
  if (!SOCKET_ERRORS.has((err as NodeJS.ErrnoException | null)?.code ?? '')) return
  Object.defineProperty(err, Symbol.for('quire.dependency'), { value: 'postgresql', configurable: true })
}

/** The 'error' listener of a checked-out connection: its query's rejection carries the error instead. */
export const ignoreClientError = () => {}
