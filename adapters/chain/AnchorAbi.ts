/**
 * The ABI of contracts/CandorAnchor.sol, typed for viem (`as const`: argument and result types are
 * inferred from it). test/adapters/chain/AnchorContract.test.ts compiles the source with solc and
 * checks it yields exactly this ABI, so the two cannot drift apart.
 */
export const candorAnchorAbi = [
  {
    inputs: [],
    stateMutability: "nonpayable",
    type: "constructor"
  },
  {
    inputs: [
      {
        internalType: "bytes32",
        name: "id",
        type: "bytes32"
      }
    ],
    name: "AlreadyRecorded",
    type: "error"
  },
  {
    inputs: [
      {
        internalType: "uint256",
        name: "leafCount",
        type: "uint256"
      },
      {
        internalType: "uint256",
        name: "maxBatchSize",
        type: "uint256"
      }
    ],
    name: "BatchTooLarge",
    type: "error"
  },
  {
    inputs: [],
    name: "EmptyBatch",
    type: "error"
  },
  {
    inputs: [],
    name: "NotOwner",
    type: "error"
  },
  {
    inputs: [],
    name: "ZeroRoot",
    type: "error"
  },
  {
    anonymous: false,
    inputs: [
      {
        indexed: true,
        internalType: "bytes32",
        name: "publicationId",
        type: "bytes32"
      },
      {
        indexed: false,
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        indexed: false,
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      },
      {
        indexed: false,
        internalType: "uint64",
        name: "timestamp",
        type: "uint64"
      }
    ],
    name: "ScoresPublished",
    type: "event"
  },
  {
    anonymous: false,
    inputs: [
      {
        indexed: true,
        internalType: "bytes32",
        name: "anchorId",
        type: "bytes32"
      },
      {
        indexed: false,
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        indexed: false,
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      },
      {
        indexed: false,
        internalType: "uint64",
        name: "timestamp",
        type: "uint64"
      }
    ],
    name: "TreeHeadsAnchored",
    type: "event"
  },
  {
    inputs: [],
    name: "MAX_BATCH_SIZE",
    outputs: [
      {
        internalType: "uint256",
        name: "",
        type: "uint256"
      }
    ],
    stateMutability: "view",
    type: "function"
  },
  {
    inputs: [
      {
        internalType: "bytes32",
        name: "anchorId",
        type: "bytes32"
      }
    ],
    name: "anchorOf",
    outputs: [
      {
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      },
      {
        internalType: "uint64",
        name: "timestamp",
        type: "uint64"
      }
    ],
    stateMutability: "view",
    type: "function"
  },
  {
    inputs: [
      {
        internalType: "bytes32",
        name: "anchorId",
        type: "bytes32"
      },
      {
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      }
    ],
    name: "anchorTreeHeads",
    outputs: [],
    stateMutability: "nonpayable",
    type: "function"
  },
  {
    inputs: [],
    name: "owner",
    outputs: [
      {
        internalType: "address",
        name: "",
        type: "address"
      }
    ],
    stateMutability: "view",
    type: "function"
  },
  {
    inputs: [
      {
        internalType: "bytes32",
        name: "publicationId",
        type: "bytes32"
      }
    ],
    name: "publicationOf",
    outputs: [
      {
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      },
      {
        internalType: "uint64",
        name: "timestamp",
        type: "uint64"
      }
    ],
    stateMutability: "view",
    type: "function"
  },
  {
    inputs: [
      {
        internalType: "bytes32",
        name: "publicationId",
        type: "bytes32"
      },
      {
        internalType: "bytes32",
        name: "batchRoot",
        type: "bytes32"
      },
      {
        internalType: "uint32",
        name: "leafCount",
        type: "uint32"
      }
    ],
    name: "publishScores",
    outputs: [],
    stateMutability: "nonpayable",
    type: "function"
  }
] as const
