/** A page of a keyset list (`GET /v1/jobs`, `GET /v1/documents`, ...). */
export type CursorPage<T> = { data: T[]; page: { next_cursor: string | null; has_more: boolean } }

/** Every item of a cursor-paginated list, fetching the next page only when the previous one is used up. */
export async function* allPages<T>(fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>) {
  let cursor: string | undefined
  do {
    const { data, page } = await fetchPage(cursor)
    yield* data
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined
  } while (cursor)
}
