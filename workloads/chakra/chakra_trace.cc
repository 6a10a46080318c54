#include "workloads/chakra/chakra_trace.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <google/protobuf/stubs/logging.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "sim/config_node.h"
#include "sim/error.h"
#include "et_def.pb.h"  // generated into the build tree from chakra/et_def.proto

namespace dejavu::workloads {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& problem) {
  throw ConfigError(SourceLoc{file, 0, 0}, where, problem);
}

// Any integer or floating attribute as a double; false when the attribute holds neither.
bool number_of(const ChakraProtoMsg::AttributeProto& a, double* out) {
  using A = ChakraProtoMsg::AttributeProto;
  switch (a.value_case()) {
    case A::kDoubleVal:
      *out = a.double_val();
      return true;
    case A::kFloatVal:
      *out = a.float_val();
      return true;
    case A::kInt32Val:
      *out = a.int32_val();
      return true;
    case A::kInt64Val:
      *out = static_cast<double>(a.int64_val());
      return true;
    case A::kUint32Val:
      *out = a.uint32_val();
      return true;
    case A::kUint64Val:
      *out = static_cast<double>(a.uint64_val());
      return true;
    case A::kSint32Val:
      *out = a.sint32_val();
      return true;
    case A::kSint64Val:
      *out = static_cast<double>(a.sint64_val());
      return true;
    case A::kFixed32Val:
      *out = a.fixed32_val();
      return true;
    case A::kFixed64Val:
      *out = static_cast<double>(a.fixed64_val());
      return true;
    case A::kSfixed32Val:
      *out = a.sfixed32_val();
      return true;
    case A::kSfixed64Val:
      *out = static_cast<double>(a.sfixed64_val());
      return true;
    case A::kBoolVal:
      *out = a.bool_val() ? 1 : 0;
      return true;
    default:
      return false;
  }
}

// A numeric attribute the simulator reads, checked: finite and within its range.
double checked(const std::string& path, const TraceNode& t, const std::string& name, double v, double min, double max) {
  if (!std::isfinite(v) || v < min || v > max) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: expected %g to %g, got %g", name.c_str(), min, max, v);
    bad(path, "node " + std::to_string(t.id) + " (" + t.name + ")", buf);
  }
  return v;
}

void read_attributes(const std::string& path, const ChakraProtoMsg::Node& n, TraceNode& t) {
  for (const auto& a : n.attr()) {
    double v = 0;
    if (a.name() == "pg_name" && a.has_string_val()) t.process_group = a.string_val();
    if (!number_of(a, &v)) continue;
    if (a.name() == "comm_type")
      t.comm_type = static_cast<int>(checked(path, t, "comm_type", v, 0, 9));
    else if (a.name() == "comm_size")
      t.comm_bytes = checked(path, t, "comm_size", v, 0, 1e15);
    else if (a.name() == "comm_src")
      t.comm_src = static_cast<int>(checked(path, t, "comm_src", v, 0, 1 << 30));
    else if (a.name() == "comm_dst")
      t.comm_dst = static_cast<int>(checked(path, t, "comm_dst", v, 0, 1 << 30));
    else if (a.name() == "comm_tag")
      t.comm_tag = static_cast<int>(checked(path, t, "comm_tag", v, -2147483648.0, 2147483647.0));
    else if (a.name() == "num_ops")
      t.num_ops = checked(path, t, "num_ops", v, 0, 1e21);
    else if (a.name() == "tensor_size")
      t.tensor_bytes = checked(path, t, "tensor_size", v, 0, 1e18);
  }
}

}  // namespace

RankTrace load_chakra_file(const std::string& path) {
  // Protobuf would log its own complaints (invalid UTF-8 in a string) on stderr; the
  // reader's one line says what is wrong.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  const std::string data = read_input_file(path);
  if (data.empty()) bad(path, "", "the file is empty; expected a Chakra execution trace (GlobalMetadata, then nodes)");
  if (data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b)
    bad(path, "", "the file is gzip-compressed; decompress it first (gunzip)");
  google::protobuf::io::ArrayInputStream raw(data.data(), static_cast<int>(data.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  const int total = static_cast<int>(data.size());
  // Reads one length-prefixed message; false at a clean end of file.
  auto next = [&](google::protobuf::MessageLite& msg, const std::string& what) {
    const int at = coded.CurrentPosition();
    if (at == total) return false;
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size))
      bad(path, what, "truncated: the length at byte " + std::to_string(at) + " is cut off");
    const int left = total - coded.CurrentPosition();
    if (static_cast<int64_t>(size) > left)
      bad(path, what,
          "truncated: a message of " + std::to_string(size) + " bytes at byte " + std::to_string(at) + " but only " +
              std::to_string(left) + " remain");
    const auto limit = coded.PushLimit(static_cast<int>(size));
    if (!msg.ParseFromCodedStream(&coded) || coded.BytesUntilLimit() != 0)
      bad(path, what, "corrupt message at byte " + std::to_string(at) + " (not a Chakra " + msg.GetTypeName() + ")");
    coded.PopLimit(limit);
    return true;
  };
  RankTrace trace;
  trace.file = path;
  ChakraProtoMsg::GlobalMetadata meta;
  if (!next(meta, "global metadata")) bad(path, "global metadata", "missing");
  std::set<uint64_t> ids;
  for (;;) {
    ChakraProtoMsg::Node n;
    const std::string where = "node #" + std::to_string(trace.nodes.size());
    if (!next(n, where)) break;
    TraceNode t;
    t.id = n.id();
    t.name = n.name();
    t.type = static_cast<TraceNodeType>(n.type());
    if (n.type() < 0 || n.type() > 7)
      bad(path, "node " + std::to_string(n.id()), "unknown node type " + std::to_string(n.type()));
    t.deps.assign(n.data_deps().begin(), n.data_deps().end());
    t.deps.insert(t.deps.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
    t.duration_s = checked(path, t, "duration_micros", static_cast<double>(n.duration_micros()), 0, 1e15) * 1e-6;
    read_attributes(path, n, t);
    if (!ids.insert(t.id).second) bad(path, "node " + std::to_string(t.id), "appears twice");
    trace.nodes.push_back(std::move(t));
  }
  for (const TraceNode& t : trace.nodes)
    for (uint64_t d : t.deps)
      if (!ids.count(d))
        bad(path, "node " + std::to_string(t.id) + " (" + t.name + ")",
            "depends on node " + std::to_string(d) + ", which the file does not have");
  return trace;
}

ChakraTrace load_chakra_trace(const std::string& prefix) {
  ChakraTrace t;
  t.prefix = prefix;
  for (int r = 0;; ++r) {
    const std::string file = prefix + "." + std::to_string(r) + ".et";
    if (!std::filesystem::exists(file)) break;
    t.ranks.push_back(load_chakra_file(file));
  }
  if (t.ranks.empty()) bad(prefix + ".0.et", "", "no such trace: expected files <prefix>.<rank>.et from rank 0");
  // A gap (ranks 0, 1 and 3) is a missing file, not a smaller trace.
  const std::filesystem::path p(prefix);
  const std::string stem = p.filename().string() + ".";
  std::error_code ec;
  const auto dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(stem, 0) != 0 || name.size() <= stem.size() + 3 || name.substr(name.size() - 3) != ".et") continue;
    const std::string rank = name.substr(stem.size(), name.size() - stem.size() - 3);
    if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos || rank.size() > 9) continue;
    if (std::stoi(rank) >= static_cast<int>(t.ranks.size()))
      bad(prefix + "." + std::to_string(t.ranks.size()) + ".et", "",
          "missing, but " + name + " is there; valid: one file for every rank from 0");
  }
  return t;
}

}  // namespace dejavu::workloads
