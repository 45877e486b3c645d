/**
 * An Ethereum JSON-RPC node in this process, for the on-chain tests: @ethereumjs/vm (the EVM the
 * EthereumJS client runs) behind a loopback HTTP server, so the code under test reaches it with
 * viem's `http` transport exactly as it reaches a real node in production.
 *
 * Hand-written on purpose: no maintained in-process Ethereum node on npm works here (tevm fails on
 * this Node 20, ganache is unmaintained), and anvil/hardhat would be a binary or a framework to
 * install. It answers only what viem asks for when deploying, sending, waiting for and reading
 * transactions, and calling contracts (the methods in `handle`), nothing more: one block is mined per
 * transaction (a one-transaction block at a constant base fee), and `eth_call`/`eth_estimateGas` run
 * on a checkpoint of the state that is reverted afterwards. Anything else answers JSON-RPC error
 * -32601, so a new method viem starts to need shows up as a clear test failure.
 */
import { createBlock, type Block } from "@ethereumjs/block"
import { createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common"
import { createTxFromRLP, type TypedTransaction } from "@ethereumjs/tx"
import { bytesToHex, createAccount, createAddressFromString, createZeroAddress, hexToBytes } from "@ethereumjs/util"
import { createVM, runTx, type VM } from "@ethereumjs/vm"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

const CHAIN_ID = 31337n
const BASE_FEE = 1_000_000_000n // 1 gwei, constant: every block is one transaction
const PRIORITY_FEE = 1_000_000_000n
const BLOCK_GAS_LIMIT = 30_000_000n
const CALL_GAS_LIMIT = 30_000_000n

type Hex = `0x${string}`
const quantity = (value: bigint | number): Hex => `0x${BigInt(value).toString(16)}`

interface Mined {
  readonly block: Block
  readonly tx: TypedTransaction | undefined
  readonly receipt: Record<string, unknown> | undefined
}

export interface InProcessChain {
  /** `http://127.0.0.1:<port>`: the JSON-RPC endpoint. */
  readonly url: string
  readonly chainId: number
  /** JSON-RPC methods called so far, in order. */
  readonly calls: ReadonlyArray<string>
  /** Mines `count` empty blocks (confirmations for what was mined before). */
  readonly mine: (count: number) => Promise<void>
  readonly close: () => Promise<void>
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Hex
  ) {
    super(message)
  }
}

const txJson = (tx: TypedTransaction, mined: Block, index: number) => ({
  hash: bytesToHex(tx.hash()),
  nonce: quantity(tx.nonce),
  blockHash: bytesToHex(mined.hash()),
  blockNumber: quantity(mined.header.number),
  transactionIndex: quantity(index),
  from: tx.getSenderAddress().toString(),
  to: tx.to?.toString() ?? null,
  value: quantity(tx.value),
  gas: quantity(tx.gasLimit),
  input: bytesToHex(tx.data),
  type: quantity(tx.type),
  chainId: quantity(CHAIN_ID),
  ...("maxFeePerGas" in tx
    ? {
        maxFeePerGas: quantity(tx.maxFeePerGas as bigint),
        maxPriorityFeePerGas: quantity(tx.maxPriorityFeePerGas as bigint),
        gasPrice: quantity(BASE_FEE + PRIORITY_FEE)
      }
    : { gasPrice: quantity((tx as unknown as { gasPrice: bigint }).gasPrice) }),
  v: quantity(tx.v ?? 0n),
  r: quantity(tx.r ?? 0n),
  s: quantity(tx.s ?? 0n),
  yParity: quantity(tx.v ?? 0n)
})

const blockJson = (block: Block, full: boolean, tx: TypedTransaction | undefined) => ({
  number: quantity(block.header.number),
  hash: bytesToHex(block.hash()),
  parentHash: bytesToHex(block.header.parentHash),
  nonce: "0x0000000000000000",
  sha3Uncles: bytesToHex(block.header.uncleHash),
  logsBloom: bytesToHex(block.header.logsBloom),
  transactionsRoot: bytesToHex(block.header.transactionsTrie),
  stateRoot: bytesToHex(block.header.stateRoot),
  receiptsRoot: bytesToHex(block.header.receiptTrie),
  miner: block.header.coinbase.toString(),
  difficulty: "0x0",
  totalDifficulty: "0x0",
  extraData: "0x",
  size: quantity(block.serialize().length),
  gasLimit: quantity(block.header.gasLimit),
  gasUsed: quantity(block.header.gasUsed),
  timestamp: quantity(block.header.timestamp),
  baseFeePerGas: quantity(BASE_FEE),
  mixHash: bytesToHex(block.header.mixHash),
  uncles: [],
  transactions: tx === undefined ? [] : full ? [txJson(tx, block, 0)] : [bytesToHex(tx.hash())]
})

/** A dev chain (id 31337) with `funded` addresses holding 1,000 ether each. */
export const startInProcessChain = async (funded: ReadonlyArray<string>): Promise<InProcessChain> => {
  // Mainnet's rules at Prague, under a chain id of its own (signatures name it, EIP-155).
  const chainCommon = createCustomCommon({ chainId: Number(CHAIN_ID) } as never, Mainnet, { hardfork: Hardfork.Prague })
  const vm: VM = await createVM({ common: chainCommon })
  for (const address of funded)
    await vm.stateManager.putAccount(createAddressFromString(address), createAccount({ balance: 10n ** 21n }))

  const blocks: Array<Mined> = []
  const byHash = new Map<string, { readonly mined: Mined }>()
  let timestamp = BigInt(Math.floor(Date.now() / 1000))
  let queue: Promise<unknown> = Promise.resolve()
  const calls: Array<string> = []

  const newBlock = (tx: TypedTransaction | undefined, gasUsed = 0n) => {
    const parent = blocks.at(-1)?.block
    timestamp = timestamp + 1n
    return createBlock(
      {
        header: {
          number: parent === undefined ? 0n : parent.header.number + 1n,
          parentHash: parent?.hash(),
          timestamp,
          gasLimit: BLOCK_GAS_LIMIT,
          gasUsed,
          baseFeePerGas: BASE_FEE
        },
        transactions: tx === undefined ? [] : [tx]
      },
      { common: chainCommon, skipConsensusFormatValidation: true }
    )
  }
  blocks.push({ block: newBlock(undefined), tx: undefined, receipt: undefined })
  const latest = () => blocks.at(-1)!.block

  const blockOf = (tag: unknown): Mined | undefined => {
    if (tag === "latest" || tag === "pending" || tag === "safe" || tag === "finalized" || tag === undefined)
      return blocks.at(-1)
    if (tag === "earliest") return blocks[0]
    return blocks[Number(BigInt(tag as string))]
  }

  const sendRaw = async (raw: Hex): Promise<Hex> => {
    const tx = createTxFromRLP(hexToBytes(raw), { common: chainCommon })
    const draft = newBlock(tx)
    const result = await runTx(vm, { tx, block: draft, skipBlockGasLimitValidation: true }).catch((cause: Error) => {
      throw new RpcError(-32000, cause.message)
    })
    const block = newBlock(tx, result.totalGasSpent)
    const hash = bytesToHex(tx.hash())
    const logs = result.receipt.logs.map(([address, topics, data], logIndex) => ({
      address: bytesToHex(address),
      topics: topics.map((topic) => bytesToHex(topic)),
      data: bytesToHex(data),
      blockNumber: quantity(block.header.number),
      blockHash: bytesToHex(block.hash()),
      transactionHash: hash,
      transactionIndex: "0x0",
      logIndex: quantity(logIndex),
      removed: false
    }))
    const receipt = {
      transactionHash: hash,
      transactionIndex: "0x0",
      blockHash: bytesToHex(block.hash()),
      blockNumber: quantity(block.header.number),
      from: tx.getSenderAddress().toString(),
      to: tx.to?.toString() ?? null,
      cumulativeGasUsed: quantity(result.totalGasSpent),
      gasUsed: quantity(result.totalGasSpent),
      effectiveGasPrice: quantity(BASE_FEE + PRIORITY_FEE),
      contractAddress: result.createdAddress?.toString() ?? null,
      logs,
      logsBloom: bytesToHex(result.bloom.bitvector),
      status: result.execResult.exceptionError === undefined ? "0x1" : "0x0",
      type: quantity(tx.type)
    }
    const mined = { block, tx, receipt }
    blocks.push(mined)
    byHash.set(hash, { mined })
    return hash
  }

  /** Runs a call on a checkpoint of the state, reverted afterwards. */
  const call = async (request: Record<string, string | undefined>) => {
    await vm.stateManager.checkpoint()
    try {
      const result = await vm.evm.runCall({
        ...(request["to"] === undefined || request["to"] === null
          ? {}
          : { to: createAddressFromString(request["to"]) }),
        caller: request["from"] === undefined ? createZeroAddress() : createAddressFromString(request["from"]),
        data: hexToBytes((request["data"] ?? request["input"] ?? "0x") as Hex),
        value: BigInt(request["value"] ?? 0),
        gasLimit: CALL_GAS_LIMIT,
        block: latest(),
        skipBalance: true
      })
      const error = result.execResult.exceptionError
      if (error !== undefined)
        throw new RpcError(3, `execution reverted: ${error.error}`, bytesToHex(result.execResult.returnValue))
      return result
    } finally {
      await vm.stateManager.revert()
    }
  }

  const handle = async (method: string, params: ReadonlyArray<any>): Promise<unknown> => {
    switch (method) {
      case "eth_chainId":
        return quantity(CHAIN_ID)
      case "net_version":
        return String(CHAIN_ID)
      case "eth_blockNumber":
        return quantity(latest().header.number)
      case "eth_gasPrice":
        return quantity(BASE_FEE + PRIORITY_FEE)
      case "eth_maxPriorityFeePerGas":
        return quantity(PRIORITY_FEE)
      case "eth_feeHistory":
        return { oldestBlock: quantity(latest().header.number), baseFeePerGas: [quantity(BASE_FEE)], reward: [] }
      case "eth_getTransactionCount": {
        const account = await vm.stateManager.getAccount(createAddressFromString(params[0]))
        return quantity(account?.nonce ?? 0n)
      }
      case "eth_getBalance": {
        const account = await vm.stateManager.getAccount(createAddressFromString(params[0]))
        return quantity(account?.balance ?? 0n)
      }
      case "eth_getCode":
        return bytesToHex(await vm.stateManager.getCode(createAddressFromString(params[0])))
      case "eth_getBlockByNumber": {
        const found = blockOf(params[0])
        return found === undefined ? null : blockJson(found.block, params[1] === true, found.tx)
      }
      case "eth_getBlockByHash": {
        const found = blocks.find((mined) => bytesToHex(mined.block.hash()) === params[0])
        return found === undefined ? null : blockJson(found.block, params[1] === true, found.tx)
      }
      case "eth_getTransactionReceipt":
        return byHash.get(params[0])?.mined.receipt ?? null
      case "eth_getTransactionByHash": {
        const found = byHash.get(params[0])?.mined
        return found?.tx === undefined ? null : txJson(found.tx, found.block, 0)
      }
      case "eth_sendRawTransaction":
        return sendRaw(params[0])
      case "eth_call":
        return bytesToHex((await call(params[0])).execResult.returnValue)
      case "eth_estimateGas": {
        const request = params[0] as Record<string, string | undefined>
        const result = await call(request)
        const data = hexToBytes((request["data"] ?? request["input"] ?? "0x") as Hex)
        // Execution plus the intrinsic cost (base, calldata, creation), with a margin for refunds.
        const calldata = data.reduce((sum, byte) => sum + (byte === 0 ? 4n : 16n), 0n)
        const intrinsic = 21_000n + calldata + (request["to"] === undefined ? 32_000n + 2n * BigInt(data.length) : 0n)
        return quantity(((result.execResult.executionGasUsed + intrinsic) * 13n) / 10n)
      }
      case "eth_getLogs": {
        const filter = params[0] as { fromBlock?: string; toBlock?: string; address?: string; topics?: Array<unknown> }
        const from = Number(
          BigInt(filter.fromBlock === undefined ? 0 : (blockOf(filter.fromBlock)?.block.header.number ?? 0n))
        )
        const to = Number(blockOf(filter.toBlock ?? "latest")?.block.header.number ?? 0n)
        const logs: Array<Record<string, unknown>> = []
        for (const mined of blocks.slice(from, to + 1))
          for (const log of (mined.receipt?.["logs"] ?? []) as Array<{ address: string; topics: Array<string> }>) {
            if (filter.address !== undefined && log.address.toLowerCase() !== filter.address.toLowerCase()) continue
            const topics = filter.topics ?? []
            if (topics.some((topic, i) => topic !== null && topic !== undefined && log.topics[i] !== topic)) continue
            logs.push(log)
          }
        return logs
      }
      default:
        throw new RpcError(-32601, `method ${method} is not served by the in-process chain`)
    }
  }

  const answer = async (request: { id?: unknown; method?: unknown; params?: unknown }) => {
    const method = String(request.method)
    calls.push(method)
    // One request at a time: a block is mined per transaction, in order.
    const run = queue.then(() => handle(method, (request.params ?? []) as ReadonlyArray<unknown>))
    queue = run.catch(() => undefined)
    try {
      return { jsonrpc: "2.0", id: request.id ?? null, result: await run }
    } catch (error) {
      const rpc = error instanceof RpcError ? error : new RpcError(-32603, String(error))
      return {
        jsonrpc: "2.0",
        id: request.id ?? null,
        error: { code: rpc.code, message: rpc.message, ...(rpc.data === undefined ? {} : { data: rpc.data }) }
      }
    }
  }

  const readBody = (request: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      request.on("error", reject)
    })

  const server = createServer((request, response) => {
    void readBody(request).then(async (text) => {
      const parsed = JSON.parse(text) as unknown
      const body = Array.isArray(parsed) ? await Promise.all(parsed.map(answer)) : await answer(parsed as never)
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    chainId: Number(CHAIN_ID),
    calls,
    mine: async (count) => {
      for (let i = 0; i < count; i++) {
        await queue
        blocks.push({ block: newBlock(undefined), tx: undefined, receipt: undefined })
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      })
  }
}
