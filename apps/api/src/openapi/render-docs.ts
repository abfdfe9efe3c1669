/**
 * Renders an OpenAPI 3.1 document as one self-contained HTML page (no scripts, no external assets): endpoints grouped
 * by tag with their parameters, request bodies and responses, then every schema as a table and as JSON.
 */

type Json = Record<string, unknown>
type Schema = Json

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The little markdown the document uses: paragraphs and `code`. */
const md = (text: unknown): string =>
  text === undefined || text === null || text === ''
    ? ''
    : String(text)
        .split(/\n{2,}/)
        .map((p) => `<p>${esc(p).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
        .join('')

const inline = (text: unknown): string => (text ? esc(text).replace(/`([^`]+)`/g, '<code>$1</code>') : '')

const refName = (ref: string) => ref.replace('#/components/schemas/', '')
const schemaLink = (name: string) => `<a href="#schema-${esc(name)}"><code>${esc(name)}</code></a>`

/** A short type expression for a schema: `string (date-time)`, `array of Job`, `"a" | "b"`, `map of string`. */
function typeOf(s: Schema | undefined): string {
  if (!s || Object.keys(s).length === 0 || (Object.keys(s).length === 1 && 'description' in s)) return 'any'
  if (typeof s.$ref === 'string') return schemaLink(refName(s.$ref))
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`
  if (Array.isArray(s.enum)) return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ')
  for (const k of ['anyOf', 'oneOf'] as const)
    if (Array.isArray(s[k])) return (s[k] as Schema[]).map(typeOf).join(' | ')
  if (Array.isArray(s.allOf)) return (s.allOf as Schema[]).map(typeOf).join(' & ')
  const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : []
  const parts = types.map((t) => {
    if (t === 'array') return `array of ${typeOf(s.items as Schema)}`
    if (t === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) {
      return `map of ${typeOf(s.additionalProperties as Schema)}`
    }
    if (t === 'string' && s.format) return `string (${esc(s.format)})`
    return esc(t)
  })
  return parts.join(' | ') || 'any'
}

/** Constraints worth a reader's eye: bounds, lengths, pattern, default. */
function rules(s: Schema | undefined): string {
  if (!s) return ''
  const out: string[] = []
  const range = (lo: unknown, hi: unknown, what: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${what}${lo}..${hi}`)
    else if (lo !== undefined) out.push(`${what}≥ ${lo}`)
    else if (hi !== undefined) out.push(`${what}≤ ${hi}`)
  }
  range(s.minimum, s.maximum, '')
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`)
  range(s.minLength, s.maxLength, 'length ')
  range(s.minItems, s.maxItems, 'items ')
  if (s.pattern) out.push(`pattern <code>${esc(s.pattern)}</code>`)
  if (s.default !== undefined) out.push(`default <code>${esc(JSON.stringify(s.default))}</code>`)
  if (s.contentMediaType) out.push('binary file part')
  return out.join('; ')
}

type Row = { name: string; schema: Schema; required: boolean }

/** Properties of an object schema, nested inline objects flattened as `parent.child` / `parent[].child`. */
function propertyRows(s: Schema | undefined, prefix = '', depth = 0): Row[] {
  if (!s || depth > 4) return []
  const props = (s.properties ?? {}) as Record<string, Schema>
  const required = new Set((s.required ?? []) as string[])
  const rows: Row[] = []
  for (const [name, child] of Object.entries(props)) {
    const full = prefix + name
    rows.push({ name: full, schema: child, required: required.has(name) })
    const item = child.items as Schema | undefined
    if (child.properties) rows.push(...propertyRows(child, `${full}.`, depth + 1))
    else if (item?.properties) rows.push(...propertyRows(item, `${full}[].`, depth + 1))
    for (const k of ['anyOf', 'oneOf'] as const) {
      for (const alt of (child[k] ?? []) as Schema[])
        if (alt.properties) rows.push(...propertyRows(alt, `${full}.`, depth + 1))
    }
  }
  return rows
}

function propertyTable(s: Schema | undefined): string {
  const rows = propertyRows(s)
  if (!rows.length) return ''
  return `<table class="props"><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Rules</th><th>Description</th></tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr><td><code>${esc(r.name)}</code></td><td>${typeOf(r.schema)}</td><td>${r.required ? 'yes' : ''}</td><td>${rules(r.schema)}</td><td>${inline(r.schema.description)}</td></tr>`,
    )
    .join('')}</tbody></table>`
}

/** A body schema: a link when it is a named schema, else its type and fields. */
function bodySchema(s: Schema | undefined): string {
  if (!s) return ''
  if (typeof s.$ref === 'string') return schemaLink(refName(s.$ref))
  return `${typeOf(s)}${propertyTable(s)}`
}

function errorCodes(s: Schema): string[] {
  const codes: string[] = []
  const walk = (n: unknown) => {
    if (!n || typeof n !== 'object') return
    if (Array.isArray(n)) return n.forEach(walk)
    const o = n as Json
    if (Array.isArray(o.enum)) codes.push(...(o.enum as string[]))
    for (const v of Object.values(o)) walk(v)
  }
  walk(s)
  return codes
}

function operation(path: string, method: string, op: Json): string {
  const params = (op.parameters ?? []) as Json[]
  const body = op.requestBody as Json | undefined
  const responses = (op.responses ?? {}) as Record<string, Json>
  const security = (op.security ?? []) as Json[]
  const auth =
    security.length === 0
      ? 'none'
      : security.some((r) => Object.keys(r).length === 0)
        ? 'optional'
        : Object.keys(security[0]!).join(', ')

  const paramTable = params.length
    ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Rules</th><th>Description</th></tr></thead><tbody>${params
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${typeOf(p.schema as Schema)}</td><td>${p.required ? 'yes' : ''}</td><td>${rules(p.schema as Schema)}</td><td>${inline(p.description)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : ''

  const bodyHtml = body
    ? `<h4>Request body</h4>${Object.entries((body.content ?? {}) as Record<string, Json>)
        .map(([type, media]) => `<p><code>${esc(type)}</code> ${bodySchema(media.schema as Schema)}</p>`)
        .join('')}`
    : ''

  const responseRows = Object.entries(responses)
    .map(([status, r]) => {
      const content = Object.entries((r.content ?? {}) as Record<string, Json>)
      const media = content[0]
      const schema = media?.[1].schema as Schema | undefined
      const isError = Number(status) >= 400
      const shape = !schema
        ? ''
        : isError
          ? `${typeOf({ anyOf: ((schema.anyOf as Schema[]) ?? [schema]).map((v) => (v.allOf as Schema[])?.[0] ?? v) })}<br>${errorCodes(
              schema,
            )
              .map((c) => `<code>${esc(c)}</code>`)
              .join(' ')}`
          : `${media![0] === 'application/json' ? '' : `<code>${esc(media![0])}</code> `}${typeof schema.$ref === 'string' ? schemaLink(refName(schema.$ref)) : typeOf(schema)}`
      return `<tr class="${isError ? 'err' : 'ok'}"><td><b>${esc(status)}</b></td><td>${shape}</td><td>${md(r.description)}</td></tr>`
    })
    .join('')

  return `<section class="op" id="op-${esc(op.operationId)}">
<h3><span class="m m-${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code> <small>${esc(op.summary ?? '')}</small></h3>
${md(op.description)}
<p class="meta">Auth: ${esc(auth)} · operationId <code>${esc(op.operationId)}</code></p>
${paramTable}${bodyHtml}
<h4>Responses</h4><table><thead><tr><th>Status</th><th>Body</th><th>Description</th></tr></thead><tbody>${responseRows}</tbody></table>
</section>`
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;display:flex}
nav{width:270px;flex:none;height:100vh;position:sticky;top:0;overflow:auto;background:#f4f5f8;border-right:1px solid #dde;padding:16px;box-sizing:border-box;font-size:13px}
nav a{color:#1d2330;text-decoration:none;display:block;padding:1px 0}nav a:hover{text-decoration:underline}
nav h4{margin:14px 0 4px;font-size:12px;text-transform:uppercase;color:#667}
main{flex:1;min-width:0;padding:24px 40px;max-width:1150px}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f0f1f5;padding:1px 4px;border-radius:3px}
pre{background:#f6f7fa;border:1px solid #e3e5ec;padding:10px;overflow:auto;font-size:12px;max-height:520px}
table{border-collapse:collapse;width:100%;margin:6px 0 14px;font-size:13.5px}th,td{border:1px solid #e0e2ea;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f4f5f8;font-weight:600}td p{margin:0 0 4px}
.op{border-top:1px solid #dde;padding-top:8px;margin-top:28px}.op h3 small{color:#667;font-weight:400}
.m{display:inline-block;min-width:54px;text-align:center;color:#fff;border-radius:4px;padding:1px 6px;font-size:12px}
.m-get{background:#2f7d4f}.m-post{background:#2a5fb0}.m-patch{background:#a0620c}.m-put{background:#7b4fb0}.m-delete{background:#b03a2a}
.meta{color:#556;font-size:13px}tr.err td:first-child{color:#a33}tr.ok td:first-child{color:#2f7d4f}
.forms a{margin-right:10px}h2{margin-top:40px;border-bottom:2px solid #dde;padding-bottom:4px}
`

const page = (title: string, nav: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body><nav>${nav}</nav><main>${body}</main></body></html>
`

/** The reference page of one document. */
export function renderDocsHtml(doc: Json): string {
  const info = (doc.info ?? {}) as Json
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>
  const components = (doc.components ?? {}) as Json
  const schemas = (components.schemas ?? {}) as Record<string, Schema>
  const schemes = (components.securitySchemes ?? {}) as Record<string, Json>
  const tags = ((doc.tags ?? []) as Json[]).map((t) => String(t.name))
  const form = String(info.title ?? '').match(/Form ([AB])/)?.[1]

  const ops: { tag: string; path: string; method: string; op: Json }[] = []
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (op) ops.push({ tag: String(((op.tags ?? []) as string[])[0] ?? 'Other'), path, method, op })
    }
  }
  for (const o of ops) if (!tags.includes(o.tag)) tags.push(o.tag)

  const nav = `<b>${esc(info.title)}</b>
<div class="forms">${['A', 'B'].map((f) => `<a href="?form=${f}">${f === form ? `<b>Form ${f}</b>` : `Form ${f}`}</a>`).join('')}<a href="/v1/openapi.json${form ? `?form=${form}` : ''}">JSON</a></div>
<a href="#intro">Introduction</a><a href="#auth">Authentication</a>
${tags
  .map((t) => {
    const list = ops.filter((o) => o.tag === t)
    return list.length
      ? `<h4>${esc(t)}</h4>${list.map((o) => `<a href="#op-${esc(o.op.operationId)}"><code>${esc(o.method.toUpperCase())}</code> ${esc(o.path)}</a>`).join('')}`
      : ''
  })
  .join('')}
<h4>Schemas</h4>${Object.keys(schemas)
    .map((n) => `<a href="#schema-${esc(n)}">${esc(n)}</a>`)
    .join('')}`

  const servers = ((doc.servers ?? []) as Json[]).map((s) => `<code>${esc(s.url)}</code>`).join(', ')
  const intro = `<h1>${esc(info.title)}</h1>
<p class="meta">OpenAPI ${esc(doc.openapi)} · version ${esc(info.version)}${servers ? ` · server ${servers}` : ''} · <a href="/v1/openapi.json${form ? `?form=${form}` : ''}">openapi.json</a></p>
<section id="intro">${md(info.summary)}${md(info.description)}</section>
<h2 id="auth">Authentication</h2>
<table><thead><tr><th>Scheme</th><th>Type</th><th>Where</th><th>Description</th></tr></thead><tbody>${Object.entries(
    schemes,
  )
    .map(
      ([name, s]) =>
        `<tr><td><code>${esc(name)}</code></td><td>${esc(s.type)}${s.scheme ? ` (${esc(s.scheme)})` : ''}</td><td>${
          s.in ? `${esc(s.in)} <code>${esc(s.name)}</code>` : '<code>Authorization</code> header'
        }</td><td>${inline(s.description)}</td></tr>`,
    )
    .join('')}</tbody></table>`

  const sections = tags
    .map((t) => {
      const list = ops.filter((o) => o.tag === t)
      if (!list.length) return ''
      const tagInfo = ((doc.tags ?? []) as Json[]).find((x) => x.name === t)
      return `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${md(tagInfo?.description)}${list.map((o) => operation(o.path, o.method, o.op)).join('')}`
    })
    .join('')

  const schemaSections = `<h2 id="schemas">Schemas</h2>${Object.entries(schemas)
    .map(
      ([
        name,
        s,
      ]) => `<section class="op" id="schema-${esc(name)}"><h3><code>${esc(name)}</code></h3>${md(s.description)}
<p>${typeOf(s)}</p>${propertyTable(s)}
<details><summary>JSON Schema</summary><pre>${esc(JSON.stringify(s, null, 2))}</pre></details></section>`,
    )
    .join('')}`

  return page(String(info.title ?? 'API reference'), nav, intro + sections + schemaSections)
}

/** `/docs` with neither a form nor a key: one link per form. */
export function renderDocsIndex(): string {
  const body = `<h1>Quire API reference</h1>
<p>Quire serves two API forms; a workspace uses one, fixed at creation, and every <code>/v1</code> request is answered in the form of its API key. Pick yours:</p>
<ul><li><a href="?form=A">Form A</a> (<a href="/v1/openapi.json?form=A">openapi.json</a>)</li>
<li><a href="?form=B">Form B</a> (<a href="/v1/openapi.json?form=B">openapi.json</a>)</li></ul>
<p>With an <code>X-API-Key</code> header, <code>/docs</code> and <code>/v1/openapi.json</code> answer in the key’s form.</p>`
  return page('Quire API reference', '<b>Quire API</b><a href="?form=A">Form A</a><a href="?form=B">Form B</a>', body)
}
