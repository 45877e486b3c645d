import { render } from "preact"
import { App } from "./App.js"
import "./Styles.css"

render(<App />, document.getElementById("app")!)
