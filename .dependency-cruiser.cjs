// The import graph's rules, checked by `npm run lint` (dependency-cruiser): no cycles, and the dependency
// direction core <- adapters <- services <- streams <- src, with prover on core only (CONTRIBUTING.md, "Folders").
const production = "^(core|adapters|services|streams|prover|src)/"

// The API's HTTP handler modules, and the other routes of the HTTP server (src/http/: the reputation
// page, health, metrics), reach the database only through a domain service (services/, issue 27).
const handlersThroughServices = ["^src/api/handlers/", "^src/http/"]

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "No module imports a module that imports it, directly or through others (type-only imports count too).",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "core-is-pure",
      comment: "core imports no edge: it is what a third-party verifier runs.",
      severity: "error",
      from: { path: "^core/" },
      to: { path: "^(adapters|services|streams|prover|src)/" }
    },
    {
      name: "adapters-below-services",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^(services|streams|src)/" }
    },
    {
      name: "services-below-streams",
      comment: "A domain service is a feature's write paths, used by the API and the workers alike: it knows neither.",
      severity: "error",
      from: { path: "^services/" },
      to: { path: "^(streams|src)/" }
    },
    {
      name: "streams-below-src",
      severity: "error",
      from: { path: "^streams/" },
      to: { path: "^src/" }
    },
    {
      name: "prover-on-core-only",
      severity: "error",
      from: { path: "^prover/" },
      to: { path: "^(adapters|services|streams|src)/" }
    },
    {
      name: "console-on-core-only",
      comment:
        "The console is a browser bundle: of the server's code it may use core/ (its verifiers) and, for the verify page, the prover's verdict-proof verifier (pure computation on core, like core).",
      severity: "error",
      from: { path: "^console/" },
      to: { path: "^(adapters|services|streams|prover|src)/", pathNot: "^prover/VerdictProof\\.ts$" }
    },
    {
      name: "server-without-console",
      comment: "The server serves the console's build; it never imports its source.",
      severity: "error",
      from: { path: production },
      to: { path: "^console/" }
    },
    {
      name: "handlers-through-services",
      comment:
        "An HTTP handler decodes, authorises, calls its feature's domain service and encodes: SQL (@effect/sql, wherever node_modules resolves) and the store's modules are the service's (services/). Type-only imports of a row's shape are allowed.",
      severity: "error",
      from: { path: handlersThroughServices },
      to: { path: ["(^|/)node_modules/@effect/sql", "^adapters/store/"], dependencyTypesNot: ["type-only"] }
    },
    {
      name: "no-sql-in-handlers",
      comment:
        "No HTTP handler writes SQL: @effect/sql (wherever node_modules resolves) is for the domain services (services/) and the store (adapters/store/).",
      severity: "error",
      from: { path: "^src/api/handlers/" },
      to: { path: "(^|/)node_modules/@effect/sql" }
    },
    {
      name: "production-without-tests",
      comment: "Production code imports neither tests nor benchmarks.",
      severity: "error",
      from: { path: production },
      to: { path: "^(test|bench)/" }
    },
    {
      name: "no-unresolvable",
      comment: "Every relative import resolves to a file.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, dependencyTypes: ["local"] }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|test/vectors|bench/\\.peer)/|^prover/assembly/Kernels\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" }
  }
}
