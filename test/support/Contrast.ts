/**
 * WCAG 2.x contrast ratio, written out from the definition (relative luminance of sRGB colours),
 * so the badge and page tests check their colours against the standard rather than against the
 * renderer's own brightness rule.
 */

export type Rgb = readonly [number, number, number]

/** `#rgb`, `#rrggbb` or `rgb(r, g, b)` / `rgba(r, g, b, a)` (what getComputedStyle answers). */
export const parseColor = (color: string): Rgb => {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim())
  if (hex !== null) {
    const short = hex[1] ?? ""
    const digits = short.length === 3 ? [...short].map((c) => c + c).join("") : short
    const channel = (i: number): number => parseInt(digits.slice(i, i + 2), 16)
    return [channel(0), channel(2), channel(4)]
  }
  const rgb = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)/i.exec(color.trim())
  if (rgb !== null) return [Number(rgb[1]), Number(rgb[2]), Number(rgb[3])]
  throw new Error(`not a colour this helper reads: ${color}`)
}

const linear = (channel: number): number => {
  const c = channel / 255
  return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4)
}

export const luminance = ([r, g, b]: Rgb): number => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)

export const contrast = (a: Rgb, b: Rgb): number => {
  const [x, y] = [luminance(a), luminance(b)]
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05)
}

/** `top` painted over `base` at `alpha` (how the badge's gradient overlay shades its background). */
export const over = (base: Rgb, top: Rgb, alpha: number): Rgb => {
  const mix = (i: 0 | 1 | 2): number => base[i] * (1 - alpha) + top[i] * alpha
  return [mix(0), mix(1), mix(2)]
}
