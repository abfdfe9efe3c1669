import type { PipelineView } from '@quire/core'

/** Versions are integers inside; Form A shows them as "v<n>", Form B as n. */
export function presentPipeline(p: PipelineView, form: 'A' | 'B') {
  const v = (n: number | null) => (n === null ? null : form === 'A' ? `v${n}` : n)
  return {
    id: p.id,
    name: p.name,
    platform: p.platform,
    published: p.latest_published_version !== null,
    latest_published_version: v(p.latest_published_version),
    versions: p.versions.map((x) => ({ ...x, version: v(x.version) })),
    created_at: p.created_at,
  }
}
