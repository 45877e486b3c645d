/**
 * Light and dark themes: the system's preference until the person picks one, which is remembered
 * (localStorage; a preference, not a secret). Styles.css keys every colour on `data-theme`.
 */
export type Theme = "light" | "dark"
const KEY = "candor.theme"

export const initialTheme = (): Theme => {
  const saved = localStorage.getItem(KEY)
  if (saved === "light" || saved === "dark") return saved
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"
}

export const applyTheme = (theme: Theme): void => {
  document.documentElement.dataset["theme"] = theme
  localStorage.setItem(KEY, theme)
}
