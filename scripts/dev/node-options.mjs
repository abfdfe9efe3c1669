// @ts-check
// The V8 options Quire's apps run with, in one place for `npm start` and `npm run bench` (the Dockerfile sets the
// same in its NODE_OPTIONS; tests/build checks that they agree).
//
// --max-semi-space-size=16: a young generation of up to 16 MB per semi-space instead of V8's smaller default. A
// submission allocates a few MB of short-lived objects (pdf.js counting the pages, the multipart stream, the rows as
// JSON), so with the default the scavenger runs every few requests and promotes objects still in use; measured on
// the API under load (interleaved A/B, 8 rounds), CPU per submission fell by 4-6% (README, Performance). It costs at most 48 MB of young
// generation under load, given back when idle.

/** The V8 options an app is started with unless the operator's NODE_OPTIONS already sizes the young generation. */
export const APP_NODE_OPTIONS = '--max-semi-space-size=16'

/**
 * NODE_OPTIONS for an app's process: the operator's own, plus APP_NODE_OPTIONS unless they set the semi-space size.
 * @param {string | undefined} current
 * @returns {string}
 */
export function appNodeOptions(current) {
  const own = (current ?? '').trim()
  if (/--max-semi-space-size\b/.test(own)) return own
  return own ? `${own} ${APP_NODE_OPTIONS}` : APP_NODE_OPTIONS
}
