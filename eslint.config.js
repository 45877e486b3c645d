// ESLint flat config: the house rules that a type checker and a formatter cannot see.
// CONTRIBUTING.md explains each of them; `npm run lint` runs this with --max-warnings 0.
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
    plugins: { "import-x": importX, unicorn },
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
