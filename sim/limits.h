// The ceilings inputs are checked against, at the edge, so that a tiny file cannot ask
// for unbounded work or memory, and no number deep inside overflows. docs/LIMITS.md lists
// them with the reasons; an input past one gets one line naming it.
#pragma once

namespace dejavu::limits {

// Files.
inline constexpr double kMaxInputBytes = 256e6;  // a YAML, CSV or Chakra file
inline constexpr int kMaxYamlNesting = 64;       // bracket levels (yaml-cpp recurses per level)

// Platforms.
inline constexpr long long kMaxGpus = 1 << 20;  // in one platform
inline constexpr long long kMaxGpusPerServer = 1024;
inline constexpr double kMinBandwidth = 1e3;   // 1 KB/s: anything slower is a typo
inline constexpr double kMaxBandwidth = 1e16;  // 10 PB/s
inline constexpr double kMaxLatency = 1;       // 1 s per hop
inline constexpr double kMaxMemory = 1e15;     // 1 PB per GPU

// Models.
inline constexpr long long kMaxLayers = 4096;
inline constexpr long long kMaxWidth = 1 << 20;  // hidden, FFN, embedding widths
inline constexpr long long kMaxHeads = 1 << 16;
inline constexpr long long kMaxSequence = 1 << 24;  // tokens per sample
inline constexpr long long kMaxRows = 1LL << 40;    // vocabulary, embedding-table rows
inline constexpr long long kMaxCount = 1 << 16;     // experts, tables, blocks, classes

// Plans and runs.
inline constexpr long long kMaxDegree = 1 << 20;     // tp, pp, dp, ep, cp
inline constexpr long long kMaxBatch = 1 << 30;      // samples per iteration or microbatch
inline constexpr long long kMaxMicrobatches = 4096;  // per replica and iteration
inline constexpr long long kMaxCommSms = 1024;       // SMs a communication kernel holds
inline constexpr double kMaxTasks = 5e7;             // tasks one simulation may lower to
inline constexpr double kMaxTime = 1e9;              // seconds (about 32 years)
inline constexpr double kMaxFactor = 1e3;            // a speed or bandwidth factor
inline constexpr long long kMaxSeed = (1LL << 53);   // seeds (exact as JSON numbers)

}  // namespace dejavu::limits
