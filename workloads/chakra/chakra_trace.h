// Reads MLCommons Chakra execution traces: one file per rank (<prefix>.<rank>.et), each a
// GlobalMetadata message and then Node messages, every message preceded by its varint32
// length. Ranks are read from 0 up until a file is missing. Malformed input (an empty,
// truncated or corrupt file, a gzip file, a dependency on a node that does not exist) is a
// ConfigError naming the file and the node.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dejavu::workloads {

enum class TraceNodeType {
  Invalid = 0,
  Metadata = 1,
  MemLoad = 2,
  MemStore = 3,
  Compute = 4,
  Send = 5,
  Recv = 6,
  Collective = 7
};

struct TraceNode {
  uint64_t id = 0;
  std::string name;
  TraceNodeType type = TraceNodeType::Invalid;
  std::vector<uint64_t> deps;  // data and control dependencies
  double duration_s = 0;       // duration_micros, when recorded
  double num_ops = 0;          // for a roofline estimate when no duration was recorded
  double tensor_bytes = 0;
  int comm_type = -1;  // Chakra CollectiveCommType
  double comm_bytes = 0;
  int comm_src = -1, comm_dst = -1, comm_tag = 0;
  std::string process_group;  // pg_name
};

struct RankTrace {
  std::string file;
  std::vector<TraceNode> nodes;  // in file order
};

struct ChakraTrace {
  std::string prefix;
  std::vector<RankTrace> ranks;
};

ChakraTrace load_chakra_trace(const std::string& prefix);
RankTrace load_chakra_file(const std::string& path);

}  // namespace dejavu::workloads
