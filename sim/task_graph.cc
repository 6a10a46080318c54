#include "sim/task_graph.h"

#include "sim/error.h"

namespace dejavu::sim {

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::Reduce:
      return "reduce";
    case CollectiveOp::AllToAll:
      return "all_to_all";
    case CollectiveOp::SendRecv:
      return "send_recv";
  }
  return "?";
}

bool parse_collective_op(const std::string& name, CollectiveOp* out) {
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather, CollectiveOp::Broadcast,
        CollectiveOp::Reduce, CollectiveOp::AllToAll, CollectiveOp::SendRecv}) {
    if (name == to_string(op)) {
      *out = op;
      return true;
    }
  }
  return false;
}

const char* collective_op_names() {
  return "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv";
}

DeviceId TaskGraph::add_device(const std::string& name, std::vector<int> hosts) {
  Device& d = devices_.emplace_back();
  d.name = name;
  d.hosts = std::move(hosts);
  return DeviceId(static_cast<int32_t>(devices_.size()) - 1);
}

StreamId TaskGraph::stream(const std::string& name) {
  for (size_t i = 0; i < stream_names_.size(); ++i)
    if (stream_names_[i] == name) return StreamId(static_cast<int32_t>(i));
  stream_names_.push_back(name);
  return StreamId(static_cast<int32_t>(stream_names_.size()) - 1);
}

LabelId TaskGraph::label(const std::string& text) {
  auto [it, inserted] = label_ids_.emplace(text, static_cast<int>(labels_.size()));
  if (inserted) labels_.push_back(text);
  return LabelId(it->second);
}

CommSetId TaskGraph::add_comm_set(CommSet set) {
  comm_sets_.push_back(std::move(set));
  return CommSetId(static_cast<int32_t>(comm_sets_.size()) - 1);
}

ParticipantsId TaskGraph::add_participants(const std::vector<DeviceId>& devices) {
  participant_sets_.emplace_back(devices.begin(), devices.end());
  return ParticipantsId(static_cast<int32_t>(participant_sets_.size()) - 1);
}

TaskId TaskGraph::push(Task t) {
  tasks_.push_back(t);
  return static_cast<TaskId>(tasks_.size()) - 1;
}

static Task base(TaskKind kind, int device, StreamId stream, LabelId label, int tag) {
  Task t;
  t.kind = kind;
  t.device = device;
  t.stream = static_cast<int16_t>(stream.value);
  t.label = label;
  t.tag = tag;
  return t;
}

TaskId TaskGraph::add_compute(DeviceId device, StreamId stream, double duration_s, LabelId label, int tag) {
  Task t = base(TaskKind::Compute, device, stream, label, tag);
  t.duration_s = duration_s;
  return push(t);
}

TaskId TaskGraph::add_transfer(DeviceId src_device, StreamId stream, CommSetId comm_set, double bytes, LabelId label,
                               int tag) {
  Task t = base(TaskKind::Transfer, src_device, stream, label, tag);
  t.comm_set = comm_set;
  t.bytes = bytes;
  return push(t);
}

TaskId TaskGraph::add_collective(ParticipantsId participants, StreamId stream, CollectiveOp op, CommSetId comm_set,
                                 double bytes, LabelId label, int tag) {
  Task t = base(TaskKind::Collective, participant_sets_.at(participants).at(0), stream, label, tag);
  t.op = op;
  t.participants = participants;
  t.comm_set = comm_set;
  t.bytes = bytes;
  return push(t);
}

void TaskGraph::add_memory(TaskId id, double alloc_bytes, double free_bytes) {
  tasks_.at(id).alloc_bytes += alloc_bytes;
  tasks_.at(id).free_bytes += free_bytes;
}

TaskId TaskGraph::append(const TaskGraph& other, const std::string& prefix) {
  const auto dev0 = static_cast<int32_t>(devices_.size()), sets0 = static_cast<int32_t>(comm_sets_.size()),
             parts0 = static_cast<int32_t>(participant_sets_.size());
  const auto task0 = static_cast<TaskId>(tasks_.size());
  for (Device d : other.devices_) {
    d.name = prefix + d.name;
    devices_.push_back(std::move(d));
  }
  std::vector<int16_t> streams;
  for (const std::string& name : other.stream_names_) streams.push_back(static_cast<int16_t>(stream(name).value));
  std::vector<int32_t> labels;
  for (const std::string& text : other.labels_) labels.push_back(label(text));
  comm_sets_.insert(comm_sets_.end(), other.comm_sets_.begin(), other.comm_sets_.end());
  for (std::vector<int> set : other.participant_sets_) {
    for (int& d : set) d += dev0;
    participant_sets_.push_back(std::move(set));
  }
  for (Task t : other.tasks_) {
    if (t.device >= 0) t.device += dev0;
    if (t.participants >= 0) t.participants += parts0;
    if (t.comm_set >= 0) t.comm_set += sets0;
    if (t.label >= 0) t.label = labels[t.label];
    t.stream = streams.at(t.stream);
    tasks_.push_back(t);
  }
  for (auto [a, b] : other.edges_) edges_.emplace_back(a + task0, b + task0);
  return task0;
}

void TaskGraph::depend(TaskId before, TaskId after) {
  if (before == after) throw ModelError("a task cannot depend on itself");
  edges_.emplace_back(before, after);
}

std::vector<int> TaskGraph::devices_of(const Task& t) const {
  if (t.kind == TaskKind::Collective) return participant_sets_[t.participants];
  return {t.device};
}

void TaskGraph::finalize() {
  const size_t n = tasks_.size();
  succ_begin_.assign(n + 1, 0);
  indegree_.assign(n, 0);
  for (auto [a, b] : edges_) {
    if (a < 0 || b < 0 || static_cast<size_t>(a) >= n || static_cast<size_t>(b) >= n)
      throw ModelError("a dependency names a task that does not exist");
    ++succ_begin_[a + 1];
    ++indegree_[b];
  }
  for (size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.assign(edges_.size(), 0);
  std::vector<int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (auto [a, b] : edges_) succ_[fill[a]++] = b;
}

}  // namespace dejavu::sim
