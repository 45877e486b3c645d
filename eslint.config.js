// ESLint flat config: the house rules that a type checker and a formatter cannot see (import cycles and the
// dependency direction are dependency-cruiser's, in .dependency-cruiser.cjs).
// CONTRIBUTING.md explains each of them; `npm run lint` runs this with --max-warnings 0.
import path from "node:path"
import js from "@eslint/js"
import unicorn from "eslint-plugin-unicorn"
import globals from "globals"
import tseslint from "typescript-eslint"

// Service tags are keyed by where they live: `class X extends Context.Tag("candor/<folder path>/X")`, the same for
// Effect.Service and HttpApiMiddleware.Tag, so a key in an error message or a layer graph says which file to open.
const tagKeys = {
  meta: { type: "problem", schema: [], messages: { key: "Tag key {{actual}} should be {{expected}}" } },
  create(context) {
    const folder = path.relative(context.cwd, path.dirname(context.filename)).split(path.sep).join("/")
    return {
      ClassDeclaration(node) {
        if (node.id === null) return
        // Context.Tag("key")<...>() and Effect.Service<...>()("key", ...): find the call that takes the key.
        for (let call = node.superClass; call?.type === "CallExpression"; call = call.callee) {
          const factory = call.callee.type === "CallExpression" ? call.callee.callee : call.callee
          const name = factory.type === "MemberExpression" ? `${factory.object.name}.${factory.property.name}` : ""
          const keyed = call.callee === factory ? ["Context.Tag"] : ["Effect.Service", "HttpApiMiddleware.Tag"]
          if (!keyed.includes(name)) continue
          const [key] = call.arguments
          const expected = `candor/${folder}/${node.id.name}`
          if (key?.type !== "Literal" || key.value !== expected) {
            context.report({
              node: key ?? call,
              messageId: "key",
              data: { actual: key?.raw ?? "none", expected: `"${expected}"` }
            })
          }
          return
        }
      }
    }
  }
}

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".candor/",
      "bench/.peer/",
      "test/vectors/",
      // AssemblyScript, compiled by asc: its types (i32, load<T>...) are not TypeScript's.
      "prover/assembly/Kernels.ts",
      "console/dist/"
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { unicorn, candor: { rules: { "tag-keys": tagKeys } } },
    rules: {
      // One file-naming convention: every module is PascalCase after the concept it holds.
      "unicorn/filename-case": [
        "error",
        {
          case: "pascalCase",
          checkDirectories: false,
          ignore: [/^index\.ts$/, /^\d{4}_[a-z0-9_]+\.ts$/, /\.config\.[jt]s$/, /^candor\.js$/]
        }
      ],
      "candor/tag-keys": "error",
      // `interface X extends Schema.Schema.Type<typeof X> {}` is Effect's idiom for naming a schema's type.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // `_`-prefixed names mark deliberately unused bindings (callback positions, destructured rests).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true }
      ]
    }
  },
  {
    // The console runs in the browser (console/src): its globals are the DOM's, not Node's.
    files: ["console/src/**"],
    languageOptions: { globals: { ...globals.browser } }
  },
  {
    // Tests read JSON response bodies and raw rows field by field, and assert on them: typing each one
    // would add ceremony, not safety (a wrong field fails the assertion).
    files: ["test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
