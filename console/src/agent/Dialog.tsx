/**
 * A confirmation dialog for actions that change what an agent may do: modal (`role="dialog"`,
 * `aria-modal`), focus moves into it and is trapped there (Tab and Shift+Tab cycle), Escape cancels,
 * and focus returns to the button that opened it.
 */
import type { ComponentChildren } from "preact"
import { useLayoutEffect, useRef } from "preact/hooks"

const FOCUSABLE = "button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select, a[href]"

export const ConfirmDialog = (props: {
  readonly title: string
  readonly confirmLabel: string
  readonly danger?: boolean
  readonly busy?: boolean
  readonly children: ComponentChildren
  readonly onConfirm: () => void
  readonly onCancel: () => void
}) => {
  const box = useRef<HTMLDivElement>(null)
  // Before the dialog is painted: a key pressed as it appears goes to the dialog, never to the page
  // behind it (an effect runs after paint, which left the opener focused for a frame).
  useLayoutEffect(() => {
    const opener = document.activeElement as HTMLElement | null
    const first =
      box.current?.querySelector<HTMLElement>("[data-autofocus]") ?? box.current?.querySelector<HTMLElement>(FOCUSABLE)
    first?.focus()
    return () => opener?.focus()
  }, [])
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      event.preventDefault()
      props.onCancel()
      return
    }
    if (event.key !== "Tab" || box.current === null) return
    const items = [...box.current.querySelectorAll<HTMLElement>(FOCUSABLE)]
    if (items.length === 0) return
    const first = items[0]!
    const last = items[items.length - 1]!
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault()
      last.focus()
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault()
      first.focus()
    }
  }
  return (
    <div class="dialog-backdrop" onClick={(event) => event.target === event.currentTarget && props.onCancel()}>
      <div
        ref={box}
        class="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="dialog-title"
        data-testid="confirm-dialog"
        onKeyDown={onKeyDown}
      >
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        <div class="row">
          <button type="button" onClick={props.onCancel} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            class={props.danger === true ? "danger" : "primary"}
            disabled={props.busy === true}
            onClick={props.onConfirm}
            data-testid="confirm-button"
          >
            {props.confirmLabel}
          </button>
        </div>
      </div>
    </div>
  )
}
