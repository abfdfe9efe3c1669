/** The desk key lives in sessionStorage only: gone with the tab, never in a URL, a cookie or a log. */
const KEY = 'quire.desk.key'

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  keep: (key: string) => sessionStorage.setItem(KEY, key),
  forget: () => sessionStorage.removeItem(KEY),
}
