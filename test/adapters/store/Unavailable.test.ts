/**
 * Which store failures mean "the database cannot be reached right now" (503, retry) and which are
 * faults (500): by the driver's codes and messages, through the SqlError the store wraps them in.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "vitest"
import { StoreError } from "../../../adapters/store/Store.js"
import { isUnavailable } from "../../../adapters/store/Unavailable.js"

const failure = (cause: unknown) =>
  new StoreError({ operation: "read", cause: new SqlError({ cause, message: "Failed to execute statement" }) })
const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code })

describe("isUnavailable", () => {
  it("an unreachable or restarting database", () => {
    for (const cause of [
      withCode("ECONNREFUSED"),
      withCode("ECONNRESET"),
      withCode("08006"), // connection_failure
      withCode("57P01"), // admin_shutdown
      withCode("57P03"), // cannot_connect_now
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect")
    ])
      expect(isUnavailable(failure(cause))).toBe(true)
  })

  it("a fault of the statement or the data", () => {
    for (const cause of [
      withCode("42601", 'syntax error at or near "selec"'),
      withCode("23505", "duplicate key value violates unique constraint"),
      withCode("22P02", "invalid input syntax for type uuid"),
      new Error("something else"),
      "a string"
    ])
      expect(isUnavailable(failure(cause))).toBe(false)
    expect(isUnavailable(new StoreError({ operation: "read", cause: undefined }))).toBe(false)
  })
})
