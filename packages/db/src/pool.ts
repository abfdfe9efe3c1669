import pg from 'pg'
import { ignoreClientError, markPostgresqlSocketError } from './direct-sql.ts'

/**
 * pg's Pool, except that a statement PostgreSQL refused leaves its connection in the pool.
 *
 * `pg.Pool#query` hands the connection back with the error, and the pool closes every connection handed back with
 * an error. That is right for a broken connection, but a refused statement (a unique or CHECK violation, a
 * reservation `submit_job` refuses with QR402) leaves the connection as healthy as before: in autocommit PostgreSQL
 * has already ended the statement's transaction. Closing it cost about 30 ms on the next query (a new connection,
 * a new backend process, every prepared statement prepared again) and turned a burst of refused submissions into a
 * burst of reconnections. Errors without a SQLSTATE (the socket, a timeout) and FATAL ones still close it.
 */
export class Pool extends pg.Pool {
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

/** An error PostgreSQL reported for the statement alone: the connection stays usable. */
function statementOnly(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity !== 'FATAL' && err.severity !== 'PANIC'
}
