/**
 * Every resource model of Candor, as `effect/Schema` definitions: the one source of validation,
 * OpenAPI components and types. Named exports; each name is unique across the files.
 */
export * from "./Ids.js"
export * from "./Concern.js"
export * from "./Verdict.js"
export * from "./Checkpoint.js"
export * from "./Trace.js"
export * from "./Card.js"
export * from "./Conscience.js"
export * from "./Organization.js"
export * from "./Plan.js"
export * from "./Drift.js"
export * from "./Agent.js"
export * from "./Containment.js"
export * from "./Certificate.js"
export * from "./Event.js"
export * from "./Policy.js"
export * from "./DeadLetter.js"
export * from "./EnforcementRecord.js"
export * from "./EvidenceRedaction.js"
export * from "./Disclaimer.js"
