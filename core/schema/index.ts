/**
 * Every resource model of Candor, as `effect/Schema` definitions: the one source of validation,
 * OpenAPI components and types. Named exports; each name is unique across the files.
 */
export * from "./ids.js"
export * from "./concern.js"
export * from "./verdict.js"
export * from "./checkpoint.js"
export * from "./trace.js"
export * from "./card.js"
export * from "./conscience.js"
export * from "./organization.js"
export * from "./plan.js"
export * from "./drift.js"
export * from "./agent.js"
export * from "./certificate.js"
export * from "./event.js"
export * from "./policy.js"
