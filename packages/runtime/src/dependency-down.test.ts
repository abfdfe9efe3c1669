import { describe, expect, it } from 'vitest'
import { DEPENDENCY_MARK, dependencyDown } from './dependency-down.ts'

describe('dependencyDown', () => {
  it('names PostgreSQL for Prisma connection errors, adapter kinds and SQLSTATEs of a stopping server', () => {
    expect(dependencyDown({ name: 'PrismaClientKnownRequestError', code: 'P1001', message: '' })).toBe('postgresql')
    expect(
      dependencyDown({
        name: 'PrismaClientKnownRequestError',
        code: 'P2010',
        message: "Raw query failed. Message: `Can't reach database server at 127.0.0.1:5432`",
      }),
    ).toBe('postgresql')
    expect(
      dependencyDown({
        name: 'PrismaClientKnownRequestError',
        code: 'P2025',
        meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } },
      }),
    ).toBe('postgresql')
    expect(dependencyDown({ code: '57P01', message: 'terminating connection due to administrator command' })).toBe(
      'postgresql',
    )
  })

  it('names Redis for ioredis errors of a connection that is gone', () => {
    expect(dependencyDown(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe('redis')
    expect(dependencyDown({ name: 'MaxRetriesPerRequestError', message: 'Reached the max retries' })).toBe('redis')
    expect(dependencyDown(new Error('wrapped', { cause: new Error('Connection is closed.') }))).toBe('redis')
  })

  it("names PostgreSQL for node-postgres's broken-client errors, bare or wrapped (seen in the outage chaos run)", () => {
    expect(dependencyDown(new Error('Client has encountered a connection error and is not queryable'))).toBe(
      'postgresql',
    )
    expect(
      dependencyDown(new Error('transaction failed', { cause: new Error('Client was closed and is not queryable') })),
    ).toBe('postgresql')
  })

  it('names PostgreSQL for node-postgres errors thrown without Prisma around them (directQuery)', () => {
    expect(dependencyDown(new Error('Connection terminated unexpectedly'))).toBe('postgresql')
    expect(
      dependencyDown(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe('postgresql')
    expect(dependencyDown(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBeNull()
  })

  it("names what a client marked: a bare socket error is anyone's, so only a marked one is an outage", () => {
    const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' })
    // A webhook receiver or an HTTP client hanging up looks the same, and must not count as a dependency outage.
    expect(dependencyDown(reset())).toBeNull()
    const marked = Object.defineProperty(reset(), Symbol.for('quire.dependency'), { value: 'postgresql' })
    expect(dependencyDown(marked)).toBe('postgresql')
    expect(dependencyDown(new Error('stage failed', { cause: marked }))).toBe('postgresql')
    expect(dependencyDown(Object.defineProperty(reset(), DEPENDENCY_MARK, { value: 'something else' }))).toBeNull()
  })

  it('leaves other errors alone (a constraint violation is not an outage)', () => {
    expect(dependencyDown({ name: 'PrismaClientKnownRequestError', code: 'P2002', message: 'Unique constraint' })).toBe(
      null,
    )
    expect(dependencyDown(new TypeError('x is undefined'))).toBe(null)
    expect(dependencyDown(null)).toBe(null)
  })
  it('a server shutting down (pg_ctl stop: 57P01), as the adapter passes it through Prisma or bare', () => {
    expect(
      dependencyDown({
        name: 'PrismaClientKnownRequestError',
        code: 'P2010',
        message: 'Raw query failed. Code: `57P01`. Message: `terminating connection due to administrator command`',
        meta: { driverAdapterError: { cause: { kind: 'postgres', originalCode: '57P01' } } },
      }),
    ).toBe('postgresql')
    expect(
      dependencyDown({
        name: 'PrismaClientUnknownRequestError',
        message: 'terminating connection due to administrator command',
      }),
    ).toBe('postgresql')
    expect(
      dependencyDown({ name: 'DriverAdapterError', message: 'x', cause: { kind: 'postgres', originalCode: '57P03' } }),
    ).toBe('postgresql')
    expect(dependencyDown({ name: 'PrismaClientKnownRequestError', code: 'P2002', message: 'Unique constraint' })).toBe(
      null,
    )
  })
})
