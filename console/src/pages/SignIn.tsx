/** Placeholder: filled in by the console's issue. */
import { useState } from "preact/hooks"
import { signIn } from "../Session.js"

export const SignInPage = ({ onSignedIn }: { readonly onSignedIn: () => void }) => {
  const [value, setValue] = useState("")
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        signIn(value)
        onSignedIn()
      }}
    >
      <h1>Sign in</h1>
      <label>
        Token or API key
        <input type="password" value={value} onInput={(event) => setValue(event.currentTarget.value)} required />
      </label>
      <button type="submit">Sign in</button>
    </form>
  )
}
