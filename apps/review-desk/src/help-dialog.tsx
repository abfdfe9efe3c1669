import { useEffect, useRef } from 'preact/hooks'

export const KEYS: [string, string][] = [
  ['j / k', 'next / previous document (in the queue: move the selection)'],
  ['Enter', 'queue: open the selected document; document: edit the selected field'],
  ['f / Shift+F', 'next / previous field'],
  ['Enter (while editing)', 'keep the typed value'],
  ['Escape (while editing)', 'undo the typing in that field'],
  ['a', 'approve (with the corrections typed)'],
  ['r', 'reject (with the corrections typed)'],
  ['e', 'escalate'],
  ['u', 'back to the queue'],
  ['?', 'show or hide this list'],
]

export function HelpDialog(props: { onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null)
  useEffect(() => close.current?.focus(), [])
  return (
    <div class="help" role="dialog" aria-modal="true" aria-labelledby="help-title">
      <h2 id="help-title">Keys</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Does</th>
          </tr>
        </thead>
        <tbody>
          {KEYS.map(([k, what]) => (
            <tr key={k}>
              <td>
                <kbd>{k}</kbd>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" ref={close} onClick={props.onClose}>
        Close
      </button>
    </div>
  )
}
