/**
 * `candor chain deploy` as an operator runs it (bin/candor.js, configured by the environment) against
 * the in-process chain: it prints the address to set, the contract is there and owned by the key,
 * and the key and RPC URL are never printed. Without them it says what to set and exits 1.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { createPublicClient, http, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { candorAnchorAbi } from "../../adapters/chain/AnchorAbi.js"
import { startInProcessChain } from "../support/InProcessChain.js"

const bin = fileURLToPath(new URL("../../bin/candor.js", import.meta.url))
// Asynchronous: the chain answers from this process's event loop while the CLI runs.
const run = (env: Record<string, string>) =>
  promisify(execFile)("node", [bin, "chain", "deploy"], { env: { ...process.env, ...env } }).then(
    (out) => ({ code: 0, ...out }),
    (error: { code: number; stdout: string; stderr: string }) => error
  )

describe("candor chain deploy", () => {
  it("deploys the contract from the configured key and prints the address to set", async () => {
    const key = generatePrivateKey()
    const owner = privateKeyToAccount(key).address
    const chain = await startInProcessChain([owner])
    try {
      const out = await run({ CANDOR_CHAIN_RPC_URL: `${chain.url}/secret-path`, CANDOR_CHAIN_PRIVATE_KEY: key })
      expect(out.code, out.stderr).toBe(0)
      const address = /set CANDOR_CHAIN_CONTRACT=(0x[0-9a-fA-F]{40})/.exec(out.stdout)?.[1] as Hex
      expect(address).toBeDefined()
      expect(out.stdout).toContain(`owner ${owner}`)
      expect(out.stdout + out.stderr).not.toContain(key.slice(2))
      expect(out.stdout + out.stderr).not.toContain("secret-path")
      const reader = createPublicClient({ transport: http(chain.url) })
      expect(await reader.readContract({ address, abi: candorAnchorAbi, functionName: "owner" })).toBe(owner)
    } finally {
      await chain.close()
    }
  }, 60_000)

  it("without an RPC URL and key, says what to set and exits 1", async () => {
    const out = await run({ CANDOR_CHAIN_RPC_URL: "", CANDOR_CHAIN_PRIVATE_KEY: "" })
    expect(out.code).toBe(1)
    expect(out.stderr).toContain("candor chain deploy needs CANDOR_CHAIN_RPC_URL and CANDOR_CHAIN_PRIVATE_KEY")
  }, 60_000)
})
