#include "strategies/trace_lowering.h"

#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "platforms/perf_model.h"
#include "strategies/plan.h"

namespace dejavu::strategies {

namespace {

using workloads::TraceNode;
using workloads::TraceNodeType;

struct Member {
  int rank;
  size_t node;
};

bool collective_op(int chakra_type, sim::CollectiveOp* op) {
  switch (chakra_type) {
    case 0:
      *op = sim::CollectiveOp::AllReduce;
      return true;
    case 1:
      *op = sim::CollectiveOp::Reduce;
      return true;
    case 2:
      *op = sim::CollectiveOp::AllGather;
      return true;
    case 5:
      *op = sim::CollectiveOp::Broadcast;
      return true;
    case 6:
      *op = sim::CollectiveOp::AllToAll;
      return true;
    case 7:
    case 8:
      *op = sim::CollectiveOp::ReduceScatter;
      return true;
    case 9:
      *op = sim::CollectiveOp::AllReduce;
      return true;  // a barrier: an empty all-reduce
    default:
      return false;
  }
}

std::string where(const TraceNode& n) { return "node " + std::to_string(n.id) + " (" + n.name + ")"; }

// Units: a node alone, or the nodes of several ranks that are one operation (the k-th
// collective of a process group on each rank; a send and its matching receive).
struct Units {
  std::vector<std::vector<Member>> members;
  std::vector<std::vector<size_t>> of;  // [rank][node] -> unit
};

std::string unit_key(const workloads::ChakraTrace& trace, int r, const TraceNode& n,
                     std::map<std::string, int>& counters) {
  const int ranks = static_cast<int>(trace.ranks.size());
  if (n.type == TraceNodeType::Collective)
    return "coll|" + n.process_group + "|" +
           std::to_string(counters["coll|" + std::to_string(r) + "|" + n.process_group]++);
  if (n.type != TraceNodeType::Send && n.type != TraceNodeType::Recv) return "";
  const int src = n.type == TraceNodeType::Send ? r : n.comm_src, dst = n.type == TraceNodeType::Send ? n.comm_dst : r;
  if (src < 0 || dst < 0 || src >= ranks || dst >= ranks)
    throw ConfigError(SourceLoc{trace.ranks[r].file, 0, 0}, where(n),
                      "comm_src / comm_dst must name ranks 0 to " + std::to_string(ranks - 1));
  const std::string pair = std::to_string(src) + ">" + std::to_string(dst) + "|" + std::to_string(n.comm_tag);
  return "p2p|" + pair + "|" + std::to_string(counters[(n.type == TraceNodeType::Send ? "s|" : "r|") + pair]++);
}

Units build_units(const workloads::ChakraTrace& trace) {
  const int ranks = static_cast<int>(trace.ranks.size());
  Units u;
  std::map<std::string, size_t> unit_of_key;
  std::map<std::string, int> counters;
  u.of.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    u.of[r].resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const std::string key = unit_key(trace, r, nodes[i], counters);
      size_t id = u.members.size();
      if (!key.empty()) id = unit_of_key.emplace(key, u.members.size()).first->second;
      if (id == u.members.size()) u.members.emplace_back();
      u.members[id].push_back({r, i});
      u.of[r][i] = id;
    }
  }
  return u;
}

std::string rank_list(const std::set<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// A point-to-point unit is one send and one receive; a collective runs on the same ranks
// every time its process group calls one, with the same kind and size on each.
void check_units(const workloads::ChakraTrace& trace, const Units& units) {
  std::map<std::string, std::set<int>> group_ranks;
  for (const auto& u : units.members) {
    const TraceNode& first = trace.ranks[u[0].rank].nodes[u[0].node];
    const std::string& file = trace.ranks[u[0].rank].file;
    if ((first.type == TraceNodeType::Send || first.type == TraceNodeType::Recv) && u.size() != 2)
      throw ConfigError(
          SourceLoc{file, 0, 0}, where(first),
          first.type == TraceNodeType::Send ? "a send that no rank receives" : "a receive that no rank sends");
    if (first.type != TraceNodeType::Collective) continue;
    std::set<int> ranks;
    for (const Member& m : u) {
      ranks.insert(m.rank);
      const TraceNode& n = trace.ranks[m.rank].nodes[m.node];
      if (n.comm_type != first.comm_type || n.comm_bytes != first.comm_bytes)
        throw ConfigError(SourceLoc{trace.ranks[m.rank].file, 0, 0}, where(n),
                          "this collective differs across ranks (kind " + std::to_string(n.comm_type) + ", " +
                              std::to_string(n.comm_bytes) + " bytes on rank " + std::to_string(m.rank) + "; kind " +
                              std::to_string(first.comm_type) + ", " + std::to_string(first.comm_bytes) +
                              " bytes on rank " + std::to_string(u[0].rank) +
                              "); every rank of a group runs the same one");
    }
    auto [it, fresh] = group_ranks.emplace(first.process_group, ranks);
    if ((fresh && ranks.size() < 2 && trace.ranks.size() > 1) || it->second != ranks)
      throw ConfigError(SourceLoc{file, 0, 0}, where(first),
                        "a collective of process group \"" + first.process_group + "\" on rank(s) " + rank_list(ranks) +
                            (fresh ? " only" : " but on rank(s) " + rank_list(it->second) + " elsewhere") +
                            "; every rank of a group takes part in each of its collectives");
  }
}

// Unit dependencies, then a topological order (deterministic: lowest unit first).
std::vector<size_t> order_units(const workloads::ChakraTrace& trace, const Units& units,
                                std::vector<std::set<size_t>>& next) {
  const size_t n_units = units.members.size();
  next.assign(n_units, {});
  std::vector<int> indegree(n_units, 0);
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    std::unordered_map<uint64_t, size_t> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
    for (size_t i = 0; i < nodes.size(); ++i)
      for (uint64_t d : nodes[i].deps) {
        const size_t from = units.of[r][index.at(d)], to = units.of[r][i];
        if (from != to && next[from].insert(to).second) ++indegree[to];
      }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t u = 0; u < n_units; ++u)
    if (indegree[u] == 0) ready.push(u);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t u = ready.top();
    ready.pop();
    order.push_back(u);
    for (size_t v : next[u])
      if (--indegree[v] == 0) ready.push(v);
  }
  for (size_t u = 0; order.size() != n_units && u < n_units; ++u)
    if (indegree[u] > 0) {
      const Member& m = units.members[u][0];
      throw ModelError(trace.ranks[m.rank].file + ": " + where(trace.ranks[m.rank].nodes[m.node]) +
                       " is in a dependency cycle");
    }
  return order;
}

// One unit's task: a collective over its ranks, a transfer, or a compute (its recorded
// duration, else a roofline estimate from num_ops and tensor_size on the rank's GPU).
sim::TaskId emit_unit(sim::TaskGraph& g, const workloads::ChakraTrace& trace, const platforms::Cluster& cluster,
                      const std::vector<Member>& unit, const std::vector<sim::DeviceId>& dev, sim::StreamId compute,
                      sim::StreamId comm) {
  const Member& m = unit[0];
  const TraceNode& n = trace.ranks[m.rank].nodes[m.node];
  const sim::LabelId label = g.label(n.name.empty() ? "node " + std::to_string(n.id) : n.name);
  if (n.type == TraceNodeType::Collective) {
    sim::CollectiveOp op;
    if (!collective_op(n.comm_type, &op))
      throw ConfigError(SourceLoc{trace.ranks[m.rank].file, 0, 0}, where(n),
                        "comm_type " + std::to_string(n.comm_type) +
                            " is not supported; valid: all-reduce, reduce, all-gather, broadcast, all-to-all, "
                            "reduce-scatter, barrier");
    std::set<int> members;
    for (const Member& x : unit) members.insert(x.rank);
    std::vector<sim::DeviceId> devices;
    std::vector<int> hosts;
    for (int r : members) {
      devices.push_back(dev[r]);
      hosts.push_back(cluster.gpus[r].host);
    }
    return g.add_collective(g.add_participants(devices), comm, op, g.add_comm_set(sim::CommSet{{hosts}}),
                            n.comm_type == 9 ? 0 : n.comm_bytes, label, -1);
  }
  if (n.type == TraceNodeType::Send || n.type == TraceNodeType::Recv) {
    const Member& s = n.type == TraceNodeType::Send ? unit[0] : unit[1];
    const TraceNode& send = trace.ranks[s.rank].nodes[s.node];
    return g.add_transfer(dev[s.rank], comm,
                          g.add_comm_set(sim::CommSet{{{cluster.gpus[s.rank].host, cluster.gpus[send.comm_dst].host}}}),
                          send.comm_bytes, label, -1);
  }
  double duration = 0;
  if (n.type == TraceNodeType::Compute && n.duration_s > 0) {
    duration = n.duration_s;
  } else if (n.type == TraceNodeType::Compute && n.num_ops > 0) {
    const platforms::PerfModel pm(*cluster.gpus[m.rank].spec);
    duration = pm.time_s({sim::OpClass::Gemm, n.num_ops, n.tensor_bytes, sim::DType::BF16});
  }
  return g.add_compute(dev[m.rank], compute, duration, label, -1);
}

}  // namespace

LoweredJob lower_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster) {
  const int ranks = static_cast<int>(trace.ranks.size());
  if (cluster.gpu_count() != ranks)
    throw ConfigError(SourceLoc{trace.prefix, 0, 0}, "",
                      "the trace has " + std::to_string(ranks) + " ranks but platform " + cluster.name + " has " +
                          std::to_string(cluster.gpu_count()) + " GPUs; valid: a platform with one GPU per rank");
  const Units units = build_units(trace);
  check_units(trace, units);
  std::vector<std::set<size_t>> next;
  const std::vector<size_t> order = order_units(trace, units, next);
  LoweredJob job;
  sim::TaskGraph& g = job.graph;
  const sim::StreamId compute = g.stream("compute"), comm = g.stream("comm");
  std::vector<sim::DeviceId> dev(ranks);
  job.roles.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    dev[r] = g.add_device("rank" + std::to_string(r), {cluster.gpus[r].host});
    g.device(dev[r]).capacity_bytes = cluster.gpus[r].spec->memory_bytes;
    g.device(dev[r]).comm_share = Plan{}.comm_share(*cluster.gpus[r].spec);  // comm_sms: auto
    job.roles[r] = GpuRole{0, r, 0, dev[r]};
    job.device_stage.push_back(0);
  }
  std::vector<sim::TaskId> task(units.members.size(), -1);
  for (size_t u : order) task[u] = emit_unit(g, trace, cluster, units.members[u], dev, compute, comm);
  for (size_t u = 0; u < units.members.size(); ++u)
    for (size_t v : next[u]) g.depend(task[u], task[v]);
  g.finalize();
  return job;
}

}  // namespace dejavu::strategies
