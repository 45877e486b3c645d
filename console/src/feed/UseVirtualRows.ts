/**
 * @tanstack/virtual-core in a Preact hook: only the rows in view (and a few around) are in the DOM,
 * so a list of thousands of events costs the same as a screenful. Rows have one fixed height.
 */
import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type VirtualizerOptions
} from "@tanstack/virtual-core"
import type { RefObject } from "preact"
import { useLayoutEffect, useReducer, useState } from "preact/hooks"

export const useVirtualRows = (
  count: number,
  rowHeight: number,
  scroller: RefObject<HTMLElement>
): Virtualizer<HTMLElement, Element> => {
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const options = (): VirtualizerOptions<HTMLElement, Element> => ({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 8,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    onChange: () => rerender(undefined)
  })
  const [virtualizer] = useState(() => new Virtualizer(options()))
  virtualizer.setOptions(options())
  useLayoutEffect(() => virtualizer._didMount(), [])
  useLayoutEffect(() => virtualizer._willUpdate())
  return virtualizer
}
