/** uPlot and its stylesheet, as one lazily loaded chunk (Chart.tsx imports this module on demand). */
import "uplot/dist/uPlot.min.css"
export { default as uPlot } from "uplot"
