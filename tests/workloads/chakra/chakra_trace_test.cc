// Chakra execution traces: written here through the protobuf API, and the real ones
// ASTRA-sim ships (tests/fixtures/chakra).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "et_def.pb.h"
#include "sim/error.h"
#include "strategies/simulate.h"
#include "workloads/chakra/chakra_trace.h"

namespace dejavu::strategies {
namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dejavu-chakra-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void write_messages(const std::string& path, const std::vector<const google::protobuf::MessageLite*>& messages) {
  std::ofstream out(path, std::ios::binary);
  google::protobuf::io::OstreamOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  for (const auto* m : messages) {
    coded.WriteVarint32(static_cast<uint32_t>(m->ByteSizeLong()));
    m->SerializeToCodedStream(&coded);
  }
}

Node node(uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type, std::vector<uint64_t> deps = {}) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

void attr(Node& n, const std::string& name, int64_t value) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

void write_rank(const std::string& prefix, int rank, const std::vector<Node>& nodes) {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  std::vector<const google::protobuf::MessageLite*> all = {&meta};
  for (const Node& n : nodes) all.push_back(&n);
  write_messages(prefix + "." + std::to_string(rank) + ".et", all);
}

platforms::Cluster star(int n, const std::string& bandwidth, const std::string& latency) {
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: 1\n    gpu: H100-SXM-80GB\n    gpus_per_server: " + std::to_string(n) +
          "\n    intra: {kind: nvswitch, bandwidth: " + bandwidth + ", latency: " + latency +
          "}\n    nic: {bandwidth: 400 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
      "star.yaml"));
}

TEST(Chakra, TwoRankTraceSimulatesToTheHandWorkedTime) {
  // Each rank computes 100 us, then all-reduces 1 MB; rank 0 sends 1 MB to rank 1, which
  // then computes 50 us. On two GPUs with B = 100 GB/s and a = 2 us end to end:
  // 100 us + (S/B + 2a) [ring of 2: 2 steps of S/2] + (a + S/B) + 50 us.
  const std::string prefix = scratch("two").string();
  const double S = 1e6, B = 100e9, a = 2e-6;
  for (int r = 0; r < 2; ++r) {
    Node c = node(1, "gemm", ChakraProtoMsg::COMP_NODE);
    c.set_duration_micros(100);
    Node ar = node(2, "allreduce", ChakraProtoMsg::COMM_COLL_NODE, {1});
    attr(ar, "comm_type", ChakraProtoMsg::ALL_REDUCE);
    attr(ar, "comm_size", static_cast<int64_t>(S));
    Node p2p = node(3, r == 0 ? "send" : "recv",
                    r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE, {2});
    attr(p2p, r == 0 ? "comm_dst" : "comm_src", r == 0 ? 1 : 0);
    attr(p2p, "comm_size", static_cast<int64_t>(S));
    attr(p2p, "comm_tag", 7);
    std::vector<Node> nodes = {c, ar, p2p};
    if (r == 1) {
      Node tail = node(4, "tail", ChakraProtoMsg::COMP_NODE, {3});
      tail.set_duration_micros(50);
      nodes.push_back(tail);
    }
    write_rank(prefix, r, nodes);
  }
  const auto cluster = star(2, "100 GB/s", "2 us");
  const auto trace = workloads::load_chakra_trace(prefix);
  ASSERT_EQ(trace.ranks.size(), 2u);
  const double expected = 100e-6 + (S / B + 2 * a) + (a + S / B) + 50e-6;
  EXPECT_NEAR(simulate_trace(trace, cluster, "analytic").report.iteration_time_s, expected, 1e-12);
  sim::EngineOptions o;
  o.fidelity = "step";
  EXPECT_NEAR(simulate_trace(trace, cluster, "simgrid", o).report.iteration_time_s / expected, 1.0, 1e-6);
}

TEST(Chakra, EveryShippedTraceLoadsAndSimulates) {
  // ASTRA-sim's microbenchmarks: 1 MB (2^20 bytes) collectives over 4, 8, 16 ranks, here on
  // a switch with 50 GiB/s and 500 ns per GPU pair (README: a ring of such links).
  const fs::path root = fs::path(DEJAVU_SOURCE_DIR) / "tests" / "fixtures" / "chakra" / "astra-sim-microbenchmarks";
  ASSERT_TRUE(fs::exists(root)) << root;
  const double S = 1048576, B = 50 * 1073741824.0, a = 500e-9;
  int simulated = 0;
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"})
    for (int n : {4, 8, 16}) {
      const std::string prefix = (root / op / (std::to_string(n) + "npus_1MB") / op).string();
      const auto trace = workloads::load_chakra_trace(prefix);
      ASSERT_EQ(static_cast<int>(trace.ranks.size()), n) << prefix;
      const double t = simulate_trace(trace, star(n, "50 GiB/s", "500 ns"), "analytic").report.iteration_time_s;
      const double step = S / (n * B) + a;
      if (std::string(op) == "all_reduce") {
        EXPECT_NEAR(t, 2 * (n - 1) * step, 1e-12) << prefix;
      }
      if (std::string(op) == "all_gather" || std::string(op) == "reduce_scatter") {
        EXPECT_NEAR(t, (n - 1) * step, 1e-12) << prefix;
      }
      if (std::string(op) == "all_to_all") {
        EXPECT_NEAR(t, (n - 1) * S / n / B + a, 1e-12) << prefix;  // direct, one step
      }
      ++simulated;
    }
  EXPECT_EQ(simulated, 12);
}

TEST(Chakra, BadTracesAreClearErrors) {
  const std::string prefix = scratch("bad").string();
  auto error_of = [&] {
    try {
      workloads::load_chakra_trace(prefix);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string file = prefix + ".0.et";
  { std::ofstream(file, std::ios::binary); }
  EXPECT_NE(error_of().find("bad.0.et: the file is empty"), std::string::npos) << error_of();

  Node c = node(1, "gemm", ChakraProtoMsg::COMP_NODE, {9});
  write_rank(prefix, 0, {c});
  EXPECT_NE(error_of().find("bad.0.et: node 1 (gemm): depends on node 9, which the file does not have"),
            std::string::npos)
      << error_of();

  Node ok = node(1, "gemm", ChakraProtoMsg::COMP_NODE);
  write_rank(prefix, 0, {ok});
  const auto size = fs::file_size(file);
  fs::resize_file(file, size - 3);
  EXPECT_NE(error_of().find("bad.0.et: node #0: truncated"), std::string::npos) << error_of();

  { std::ofstream(file, std::ios::binary) << std::string("\x05\xff\xff\xff\xff\xff", 6); }
  EXPECT_NE(error_of().find("bad.0.et: global metadata: corrupt message"), std::string::npos) << error_of();

  Node x = node(1, "x", ChakraProtoMsg::COMP_NODE, {2}), y = node(2, "y", ChakraProtoMsg::COMP_NODE, {1});
  write_rank(prefix, 0, {x, y});
  try {
    simulate_trace(workloads::load_chakra_trace(prefix), star(1, "1 GB/s", "1 us"));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.0.et: node 1 (x) is in a dependency cycle"), std::string::npos)
        << e.what();
  }
  fs::remove_all(fs::path(prefix).parent_path());
}

TEST(Chakra, NumbersAndRanksThatCannotBeAreClearErrors) {
  const std::string prefix = scratch("nums").string();
  auto error_of = [&](int ranks) {
    try {
      simulate_trace(workloads::load_chakra_trace(prefix), star(ranks, "100 GB/s", "1 us"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto with_double = [](Node n, const std::string& name, double v) {
    auto* a = n.add_attr();
    a->set_name(name);
    a->set_double_val(v);
    return n;
  };
  // NaN, infinite or negative sizes and counts would reach the outputs: refused here.
  write_rank(prefix, 0, {with_double(node(1, "ar", ChakraProtoMsg::COMM_COLL_NODE), "comm_size", NAN)});
  EXPECT_NE(error_of(1).find("nums.0.et: node 1 (ar): comm_size: expected 0 to 1e+15, got nan"), std::string::npos)
      << error_of(1);
  write_rank(prefix, 0, {with_double(node(1, "g", ChakraProtoMsg::COMP_NODE), "num_ops", -5)});
  EXPECT_NE(error_of(1).find("node 1 (g): num_ops: expected 0 to 1e+21, got -5"), std::string::npos) << error_of(1);
  write_rank(prefix, 0, {with_double(node(1, "g", ChakraProtoMsg::COMP_NODE), "tensor_size", INFINITY)});
  EXPECT_NE(error_of(1).find("tensor_size: expected 0 to 1e+18, got inf"), std::string::npos) << error_of(1);

  // Ranks 0, 1 and 3: a missing file, not a two-rank trace.
  Node ar = node(1, "ar", ChakraProtoMsg::COMM_COLL_NODE);
  attr(ar, "comm_type", ChakraProtoMsg::ALL_REDUCE);
  attr(ar, "comm_size", 1000);
  for (int r : {0, 1, 3}) write_rank(prefix, r, {ar});
  EXPECT_NE(error_of(2).find("nums.2.et: missing, but nums.3.et is there"), std::string::npos) << error_of(2);
  fs::remove(prefix + ".3.et");

  // A collective on one rank of two, and one whose size differs across the ranks.
  Node gemm = node(1, "gemm", ChakraProtoMsg::COMP_NODE);
  write_rank(prefix, 1, {gemm});
  EXPECT_NE(error_of(2).find("node 1 (ar): a collective of process group \"\" on rank(s) 0 only"), std::string::npos)
      << error_of(2);
  Node bigger = ar;
  attr(bigger, "comm_size", 2000);  // the last value of an attribute wins, as in the reader
  write_rank(prefix, 1, {bigger});
  EXPECT_NE(error_of(2).find("this collective differs across ranks"), std::string::npos) << error_of(2);
  fs::remove_all(fs::path(prefix).parent_path());
}

}  // namespace
}  // namespace dejavu::strategies
