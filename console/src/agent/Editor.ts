/**
 * The policy's YAML editor: CodeMirror 6 with the YAML language, loaded on demand (PolicyEditor.tsx
 * imports this module when the page shows the policy). An error from the API that names a line
 * (`line 3, column 7: …`) is marked on that line.
 */
import { yaml } from "@codemirror/lang-yaml"
import { EditorState, StateEffect, StateField, type Extension } from "@codemirror/state"
import { Decoration, type DecorationSet, EditorView, keymap, lineNumbers } from "@codemirror/view"
import { minimalSetup } from "codemirror"

const setErrorLine = StateEffect.define<number | null>()

const errorLine = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update: (decorations, transaction) => {
    for (const effect of transaction.effects) {
      if (!effect.is(setErrorLine)) continue
      const number = effect.value
      if (number === null || number < 1 || number > transaction.state.doc.lines) return Decoration.none
      const line = transaction.state.doc.line(number)
      return Decoration.set([
        Decoration.line({ class: "cm-error-line", attributes: { "data-error-line": "true" } }).range(line.from)
      ])
    }
    return transaction.docChanged ? Decoration.none : decorations
  },
  provide: (field) => EditorView.decorations.from(field)
})

export interface PolicyEditorHandle {
  readonly text: () => string
  readonly setText: (text: string) => void
  readonly markLine: (line: number | null) => void
  readonly destroy: () => void
}

export const mountEditor = (
  parent: HTMLElement,
  initial: string,
  options: { readonly readOnly: boolean; readonly label: string; readonly onSave: () => void }
): PolicyEditorHandle => {
  const extensions: Array<Extension> = [
    minimalSetup,
    lineNumbers(),
    yaml(),
    errorLine,
    EditorState.readOnly.of(options.readOnly),
    EditorView.contentAttributes.of({ "aria-label": options.label }),
    keymap.of([{ key: "Mod-s", preventDefault: true, run: () => (options.onSave(), true) }])
  ]
  const view = new EditorView({ parent, state: EditorState.create({ doc: initial, extensions }) })
  return {
    text: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    markLine: (line) => view.dispatch({ effects: setErrorLine.of(line) }),
    destroy: () => view.destroy()
  }
}

/** YAML for a policy the API returned as JSON (the editor shows YAML; the API takes either). */
export { stringify as toYaml } from "yaml"
