// ESLint flat config: the house rules that a type checker and a formatter cannot see.
// CONTRIBUTING.md explains each of them; `npm run lint` runs this with --max-warnings 0.
import path from "node:path"
import js from "@eslint/js"
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript"
import importX from "eslint-plugin-import-x"
import unicorn from "eslint-plugin-unicorn"
import globals from "globals"
import tseslint from "typescript-eslint"

// Dependency direction: core <- prover; core <- adapters <- streams <- src. Tests and benchmarks may import
// anything; production code imports neither of them.
const layers = [
  {
    target: "./core",
    from: ["./adapters", "./streams", "./prover", "./src"],
    message: "core is pure: it imports no edge"
  },
  { target: "./adapters", from: ["./streams", "./src"], message: "adapters do not import streams or src" },
  { target: "./streams", from: ["./src"], message: "streams do not import the composition roots in src" },
  { target: "./prover", from: ["./adapters", "./streams", "./src"], message: "prover imports only core" },
  {
    target: ["./core", "./adapters", "./streams", "./prover", "./src"],
    from: ["./test", "./bench"],
    message: "production code does not import tests or benchmarks"
  }
]

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
      "prover/assembly/Kernels.ts"
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { "import-x": importX, unicorn, candor: { rules: { "tag-keys": tagKeys } } },
    settings: {
      // The TypeScript preset tells import-x to parse .ts files; without it no-cycle sees no imports at all.
      ...importX.flatConfigs.typescript.settings,
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })]
    },
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
      "import-x/no-cycle": "error",
      "import-x/no-restricted-paths": ["error", { zones: layers }],
      // `_`-prefixed names mark deliberately unused bindings (callback positions, destructured rests).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true }
      ]
    }
  },
  {
    // Tests read JSON response bodies and raw rows field by field, and assert on them: typing each one
    // would add ceremony, not safety (a wrong field fails the assertion).
    files: ["test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
