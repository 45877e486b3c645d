// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title CandorAnchor
/// @notice Write-once anchors of one Candor service's own Merkle batch roots (docs/on-chain.md).
/// @dev Only roots are stored: every leaf (a signed tree head of an agent's log, or a reputation
/// score Candor computed) is public off-chain and proven against a root with an RFC 6962 inclusion
/// proof (SHA-256). Nothing here computes or interprets scores. This is NOT an ERC-8004 registry:
/// ERC-8004's reputation registry takes feedback from clients about ERC-721 agent identities, while
/// this contract lets one service commit, in public and in order, to what its own logs said.
contract CandorAnchor {
    /// @notice Largest batch one call may anchor (leaves of one batch tree).
    uint256 public constant MAX_BATCH_SIZE = 200;

    /// @notice The deployer: the only account that may write.
    address public immutable owner;

    struct Batch {
        bytes32 root;
        uint32 leafCount;
        uint64 timestamp;
    }

    /// @notice Tree-head anchors by id: the batch root over the anchored signed tree heads.
    mapping(bytes32 => Batch) private _anchors;
    /// @notice Score publications by id: the batch root over the published scores.
    mapping(bytes32 => Batch) private _publications;

    event TreeHeadsAnchored(bytes32 indexed anchorId, bytes32 batchRoot, uint32 leafCount, uint64 timestamp);
    event ScoresPublished(bytes32 indexed publicationId, bytes32 batchRoot, uint32 leafCount, uint64 timestamp);

    error NotOwner();
    error EmptyBatch();
    error BatchTooLarge(uint256 leafCount, uint256 maxBatchSize);
    error ZeroRoot();
    error AlreadyRecorded(bytes32 id);

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    /// @notice Records the batch root of `leafCount` signed tree heads under `anchorId` (once).
    function anchorTreeHeads(bytes32 anchorId, bytes32 batchRoot, uint32 leafCount) external onlyOwner {
        uint64 timestamp = _record(_anchors, anchorId, batchRoot, leafCount);
        emit TreeHeadsAnchored(anchorId, batchRoot, leafCount, timestamp);
    }

    /// @notice Records the batch root of `leafCount` reputation scores under `publicationId` (once).
    function publishScores(bytes32 publicationId, bytes32 batchRoot, uint32 leafCount) external onlyOwner {
        uint64 timestamp = _record(_publications, publicationId, batchRoot, leafCount);
        emit ScoresPublished(publicationId, batchRoot, leafCount, timestamp);
    }

    /// @notice A tree-head anchor; all zero when `anchorId` was never recorded.
    function anchorOf(bytes32 anchorId) external view returns (bytes32 batchRoot, uint32 leafCount, uint64 timestamp) {
        Batch storage batch = _anchors[anchorId];
        return (batch.root, batch.leafCount, batch.timestamp);
    }

    /// @notice A score publication; all zero when `publicationId` was never recorded.
    function publicationOf(
        bytes32 publicationId
    ) external view returns (bytes32 batchRoot, uint32 leafCount, uint64 timestamp) {
        Batch storage batch = _publications[publicationId];
        return (batch.root, batch.leafCount, batch.timestamp);
    }

    function _record(
        mapping(bytes32 => Batch) storage batches,
        bytes32 id,
        bytes32 batchRoot,
        uint32 leafCount
    ) private returns (uint64 timestamp) {
        if (leafCount == 0) revert EmptyBatch();
        if (leafCount > MAX_BATCH_SIZE) revert BatchTooLarge(leafCount, MAX_BATCH_SIZE);
        if (batchRoot == bytes32(0)) revert ZeroRoot();
        if (batches[id].root != bytes32(0)) revert AlreadyRecorded(id);
        timestamp = uint64(block.timestamp);
        batches[id] = Batch(batchRoot, leafCount, timestamp);
    }
}
