import { useEffect, useRef, useState } from 'preact/hooks'
import type { Client } from './api-client.ts'
import { confidenceBand } from './field-value.ts'

export type PageBox = { field: string; bbox: [number, number, number, number]; confidence: number }

/**
 * One page image with a box per field read on it. The image is fetched with the key (a header, so no URL carries it)
 * and drawn on a canvas: the desk's CSP (`default-src 'self'`) admits no blob: or data: image URLs. Boxes are placed
 * in fractions of the page, as `bbox` gives them.
 */
export function PageImage(props: {
  client: Client
  documentId: string
  n: number
  boxes: PageBox[]
  selected: string | null
  onSelect: (field: string) => void
}) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [state, setState] = useState<'loading' | 'ready' | string>('loading')
  useEffect(() => {
    let gone = false
    props.client
      .page(props.documentId, props.n)
      .then((blob) => createImageBitmap(blob))
      .then((bitmap) => {
        const c = canvas.current
        if (gone || !c) return
        c.width = bitmap.width
        c.height = bitmap.height
        c.getContext('2d')?.drawImage(bitmap, 0, 0)
        setState('ready')
      })
      .catch((e: Error) => !gone && setState(`Page ${props.n} could not be shown: ${e.message}`))
    return () => {
      gone = true
    }
  }, [props.documentId, props.n])

  return (
    <figure class="page" data-page={props.n}>
      <div class="page-frame">
        <canvas ref={canvas} class="page-canvas" role="img" aria-label={`Page ${props.n}`} />
        {state === 'ready' &&
          props.boxes.map((b) => (
            <button
              type="button"
              key={b.field}
              tabIndex={-1}
              data-field={b.field}
              aria-label={`Field ${b.field} on page ${props.n}`}
              aria-pressed={props.selected === b.field ? 'true' : 'false'}
              class={`box band-${confidenceBand(b.confidence)}${props.selected === b.field ? ' selected' : ''}`}
              style={{
                left: `${b.bbox[0] * 100}%`,
                top: `${b.bbox[1] * 100}%`,
                width: `${(b.bbox[2] - b.bbox[0]) * 100}%`,
                height: `${(b.bbox[3] - b.bbox[1]) * 100}%`,
              }}
              onClick={() => props.onSelect(b.field)}
            />
          ))}
      </div>
      <figcaption>{state === 'ready' || state === 'loading' ? `Page ${props.n}` : state}</figcaption>
    </figure>
  )
}
