/**
 * contracts/CandorAnchor.sol and how it is built: compiled with the solc package (the compiler's
 * own WebAssembly build, pinned in package.json) with fixed settings, so anyone compiling the same
 * source with the same solc version and settings gets the same bytecode, and can compare it with
 * the code at the deployed address (docs/on-chain.md, "Checking the contract").
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type Solc from "solc"

/** The source, shipped with the package. */
export const CONTRACT_SOURCE_URL = new URL("../../contracts/CandorAnchor.sol", import.meta.url)
export const CONTRACT_FILE = "CandorAnchor.sol"
export const CONTRACT_NAME = "CandorAnchor"

/**
 * Cancun, not solc's newer default: the bytecode must run on every chain an operator may pick, and
 * L2s adopt new opcodes late. The optimizer settings are part of what a verifier must repeat.
 */
export const COMPILER_SETTINGS = {
  evmVersion: "cancun",
  optimizer: { enabled: true, runs: 200 }
} as const

export interface CompiledContract {
  readonly abi: ReadonlyArray<unknown>
  /** 0x-prefixed creation bytecode. */
  readonly bytecode: `0x${string}`
  /**
   * 0x-prefixed runtime bytecode with zeros where the immutable `owner` goes: the code at a deployed
   * address is this with the owner filled in (`runtimeCodeFor`).
   */
  readonly deployedBytecode: `0x${string}`
  /** Byte ranges of the runtime code that hold immutables (only `owner` here). */
  readonly immutableRanges: ReadonlyArray<{ readonly start: number; readonly length: number }>
  /** e.g. `0.8.37+commit.f401782d.Emscripten.clang`. */
  readonly compilerVersion: string
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<
    string,
    Record<
      string,
      {
        readonly abi: ReadonlyArray<unknown>
        readonly evm: {
          readonly bytecode: { readonly object: string }
          readonly deployedBytecode: {
            readonly object: string
            readonly immutableReferences?: Record<string, ReadonlyArray<{ start: number; length: number }>>
          }
        }
      }
    >
  >
}

/**
 * solc, loaded on the first compile: the package is the compiler built to JavaScript (some 8 MB,
 * decompressed when it loads: half a second of CPU and 100 MB of garbage), so importing it with the
 * module made every `candor` start (serve, verify, each CLI command) pay for `chain deploy`.
 */
const loadSolc = (): typeof Solc => createRequire(import.meta.url)("solc") as typeof Solc

/** Compiles `source` (default: the shipped contract). Throws with solc's messages when it does not compile. */
export const compileAnchorContract = (source: string = readFileSync(CONTRACT_SOURCE_URL, "utf8")): CompiledContract => {
  const solc = loadSolc()
  const input = {
    language: "Solidity",
    sources: { [CONTRACT_FILE]: { content: source } },
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: {
        "*": {
          "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.deployedBytecode.immutableReferences"]
        }
      }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0)
    throw new Error(`${CONTRACT_FILE} does not compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`)
  const contract = output.contracts?.[CONTRACT_FILE]?.[CONTRACT_NAME]
  if (contract === undefined) throw new Error(`${CONTRACT_FILE} has no contract ${CONTRACT_NAME}`)
  return {
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    immutableRanges: Object.values(contract.evm.deployedBytecode.immutableReferences ?? {}).flat(),
    compilerVersion: solc.version()
  }
}

/**
 * The runtime code a contract deployed by `owner` has: the compiled runtime code with the owner's
 * address (left-padded to 32 bytes) in each immutable range. Compare it with `eth_getCode`.
 */
export const runtimeCodeFor = (compiled: CompiledContract, owner: string): `0x${string}` => {
  const code = compiled.deployedBytecode.slice(2).split("")
  const word = owner.toLowerCase().replace(/^0x/, "").padStart(64, "0")
  for (const { length, start } of compiled.immutableRanges)
    code.splice(start * 2, length * 2, ...word.slice(64 - length * 2))
  return `0x${code.join("")}`
}
