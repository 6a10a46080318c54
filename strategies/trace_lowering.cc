#include "strategies/trace_lowering.h"

#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "platforms/perf_model.h"

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
    case 0: *op = sim::CollectiveOp::AllReduce; return true;
    case 1: *op = sim::CollectiveOp::Reduce; return true;
    case 2: *op = sim::CollectiveOp::AllGather; return true;
    case 5: *op = sim::CollectiveOp::Broadcast; return true;
    case 6: *op = sim::CollectiveOp::AllToAll; return true;
    case 7:
    case 8: *op = sim::CollectiveOp::ReduceScatter; return true;
    case 9: *op = sim::CollectiveOp::AllReduce; return true;  // a barrier: an empty all-reduce
    default: return false;
  }
}

std::string where(const TraceNode& n) {
  return "node " + std::to_string(n.id) + " (" + n.name + ")";
}

}  // namespace

LoweredJob lower_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster) {
  const int ranks = static_cast<int>(trace.ranks.size());
  if (cluster.gpu_count() != ranks)
    throw ConfigError(SourceLoc{trace.prefix, 0, 0}, "",
                      "the trace has " + std::to_string(ranks) + " ranks but platform " + cluster.name + " has " +
                          std::to_string(cluster.gpu_count()) + " GPUs; valid: a platform with one GPU per rank");

  // Units: a node alone, or the nodes of several ranks that are one operation.
  std::vector<std::vector<Member>> units;
  std::map<std::string, size_t> unit_of_key;
  std::vector<std::vector<size_t>> unit_of(ranks);
  std::map<std::string, int> counters;
  for (int r = 0; r < ranks; ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    unit_of[r].resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const TraceNode& n = nodes[i];
      std::string key;
      if (n.type == TraceNodeType::Collective) {
        key = "coll|" + n.process_group + "|" + std::to_string(counters["coll|" + std::to_string(r) + "|" + n.process_group]++);
      } else if (n.type == TraceNodeType::Send || n.type == TraceNodeType::Recv) {
        const int src = n.type == TraceNodeType::Send ? r : n.comm_src, dst = n.type == TraceNodeType::Send ? n.comm_dst : r;
        if (src < 0 || dst < 0 || src >= ranks || dst >= ranks)
          throw ConfigError(SourceLoc{trace.ranks[r].file, 0, 0}, where(n),
                            "comm_src / comm_dst must name ranks 0 to " + std::to_string(ranks - 1));
        const std::string pair = std::to_string(src) + ">" + std::to_string(dst) + "|" + std::to_string(n.comm_tag);
        key = "p2p|" + pair + "|" + std::to_string(counters[(n.type == TraceNodeType::Send ? "s|" : "r|") + pair]++);
      }
      size_t id;
      if (key.empty()) {
        id = units.size();
        units.emplace_back();
      } else {
        auto [it, fresh] = unit_of_key.emplace(key, units.size());
        if (fresh) units.emplace_back();
        id = it->second;
      }
      units[id].push_back({r, i});
      unit_of[r][i] = id;
    }
  }
  // A point-to-point unit is exactly one send and one receive.
  for (const auto& u : units) {
    const TraceNode& first = trace.ranks[u[0].rank].nodes[u[0].node];
    if ((first.type == TraceNodeType::Send || first.type == TraceNodeType::Recv) && u.size() != 2)
      throw ConfigError(SourceLoc{trace.ranks[u[0].rank].file, 0, 0}, where(first),
                        first.type == TraceNodeType::Send ? "a send that no rank receives" : "a receive that no rank sends");
  }

  // Unit dependencies, then a topological order (deterministic: lowest unit first).
  std::vector<std::set<size_t>> next(units.size());
  std::vector<int> indegree(units.size(), 0);
  for (int r = 0; r < ranks; ++r) {
    const auto& nodes = trace.ranks[r].nodes;
    std::unordered_map<uint64_t, size_t> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
    for (size_t i = 0; i < nodes.size(); ++i)
      for (uint64_t d : nodes[i].deps) {
        const size_t from = unit_of[r][index.at(d)], to = unit_of[r][i];
        if (from != to && next[from].insert(to).second) ++indegree[to];
      }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t u = 0; u < units.size(); ++u)
    if (indegree[u] == 0) ready.push(u);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t u = ready.top();
    ready.pop();
    order.push_back(u);
    for (size_t v : next[u])
      if (--indegree[v] == 0) ready.push(v);
  }
  if (order.size() != units.size()) {
    for (size_t u = 0; u < units.size(); ++u)
      if (indegree[u] > 0) {
        const Member& m = units[u][0];
        throw ModelError(trace.ranks[m.rank].file + ": " + where(trace.ranks[m.rank].nodes[m.node]) +
                         " is in a dependency cycle");
      }
  }

  LoweredJob job;
  sim::TaskGraph& g = job.graph;
  const int compute = g.stream("compute"), comm = g.stream("comm");
  std::vector<int> dev(ranks);
  job.roles.resize(ranks);
  for (int r = 0; r < ranks; ++r) {
    dev[r] = g.add_device("rank" + std::to_string(r), {cluster.gpus[r].host});
    g.device(dev[r]).capacity_bytes = cluster.gpus[r].spec->memory_bytes;
    job.roles[r] = GpuRole{0, r, 0, dev[r]};
    job.device_stage.push_back(0);
  }
  std::vector<sim::TaskId> task(units.size(), -1);
  for (size_t u : order) {
    const Member& m = units[u][0];
    const auto& file = trace.ranks[m.rank].file;
    const TraceNode& n = trace.ranks[m.rank].nodes[m.node];
    const int label = g.label(n.name.empty() ? "node " + std::to_string(n.id) : n.name);
    if (n.type == TraceNodeType::Collective) {
      sim::CollectiveOp op;
      if (!collective_op(n.comm_type, &op))
        throw ConfigError(SourceLoc{file, 0, 0}, where(n),
                          "comm_type " + std::to_string(n.comm_type) +
                              " is not supported; valid: all-reduce, reduce, all-gather, broadcast, all-to-all, reduce-scatter, barrier");
      std::set<int> members;
      for (const Member& x : units[u]) members.insert(x.rank);
      std::vector<int> devices, hosts;
      for (int r : members) {
        devices.push_back(dev[r]);
        hosts.push_back(cluster.gpus[r].host);
      }
      task[u] = g.add_collective(g.add_participants(devices), comm, op, g.add_comm_set(sim::CommSet{{hosts}}),
                                 n.comm_type == 9 ? 0 : n.comm_bytes, label, -1);
    } else if (n.type == TraceNodeType::Send || n.type == TraceNodeType::Recv) {
      const Member& s = trace.ranks[units[u][0].rank].nodes[units[u][0].node].type == TraceNodeType::Send ? units[u][0] : units[u][1];
      const TraceNode& send = trace.ranks[s.rank].nodes[s.node];
      task[u] = g.add_transfer(dev[s.rank], comm,
                               g.add_comm_set(sim::CommSet{{{cluster.gpus[s.rank].host, cluster.gpus[send.comm_dst].host}}}),
                               send.comm_bytes, label, -1);
    } else {
      double duration = 0;
      if (n.type == TraceNodeType::Compute) {
        if (n.duration_s > 0) {
          duration = n.duration_s;
        } else if (n.num_ops > 0) {  // no recorded time: a roofline estimate on the rank's GPU
          const platforms::PerfModel pm(*cluster.gpus[m.rank].spec);
          duration = pm.time_s({sim::OpClass::Gemm, n.num_ops, n.tensor_bytes, sim::DType::BF16});
        }
      }
      task[u] = g.add_compute(dev[m.rank], compute, duration, label, -1);
    }
  }
  for (size_t u = 0; u < units.size(); ++u)
    for (size_t v : next[u]) g.depend(task[u], task[v]);
  g.finalize();
  return job;
}

}  // namespace dejavu::strategies
