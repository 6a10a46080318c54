// The simulator's input: tasks with dependencies, placed on device streams. It knows
// nothing of neural networks. A device may stand for several identical GPUs (a
// tensor-parallel group, symmetric data-parallel replicas); its `hosts` list says which.
//
// Tasks on one (device, stream) run one at a time, in the order they were added, as on a
// CUDA stream. A compute task carries its duration; a transfer or collective carries bytes
// and the physical host groups it stands for, and the engine prices it on the Network.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace dejavu::sim {

using TaskId = int32_t;

// Ids of a graph's parts, each its own type: built from an int only explicitly, read as an
// int freely (to index). Passing a stream where a device goes does not compile.
template <class Kind>
struct Id {
  constexpr Id() = default;
  constexpr explicit Id(int32_t v) : value(v) {}
  constexpr operator int32_t() const { return value; }  // NOLINT: reading as an index
  int32_t value = -1;
};
using DeviceId = Id<struct DeviceKind>;
using StreamId = Id<struct StreamKind>;
using LabelId = Id<struct LabelKind>;
using CommSetId = Id<struct CommSetKind>;
using ParticipantsId = Id<struct ParticipantsKind>;

enum class TaskKind : uint8_t { Compute, Transfer, Collective };
// Sizes follow nccl-tests' "size": the all-reduce buffer; reduce-scatter's input and
// all-gather's output (n parts); the broadcast or reduce buffer; all-to-all's send buffer
// per rank (S/n to each peer); send_recv's buffer each rank sends to the next (nccl-tests'
// sendrecv: a ring shift of point-to-point transfers).
enum class CollectiveOp : uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll, SendRecv };

const char* to_string(CollectiveOp op);
bool parse_collective_op(const std::string& name, CollectiveOp* out);
const char* collective_op_names();

struct MemoryPart {
  std::string name;  // "weights", "gradients", "optimizer", ...
  double bytes = 0;
};

struct Device {
  std::string name;
  std::vector<int> hosts;  // network hosts (GPUs) this device stands for
  // Held for the whole run (model states); tasks add and release the rest.
  std::vector<MemoryPart> resident;
  double capacity_bytes = 0;  // 0: unknown
  // The share of this device's SMs one communication kernel (NCCL's CTAs: a collective, or
  // a send or receive between GPUs) holds while it runs; NCCL's CTAs never share an SM with
  // a compute kernel. Engines that share resources run a compute task beside k such kernels
  // at (1 - c) / (1 - c + k c) of its speed alone (a GPU's SMs shared by weight: the
  // compute kernel's 1 - c against c per communication kernel). 0: not modelled.
  double comm_share = 0;
};

// The physical transfers or collectives one task stands for: each group is a list of
// network hosts (for a transfer, {src, dst}). Groups are identical by symmetry, so the
// first is priced; all of them load links.
struct CommSet {
  std::vector<std::vector<int>> groups;
};

struct Task {
  TaskKind kind = TaskKind::Compute;
  CollectiveOp op = CollectiveOp::AllReduce;
  int16_t stream = 0;
  int32_t device = -1;        // compute: where it runs; transfer: the sender
  int32_t participants = -1;  // collective: index into participant_sets (devices)
  int32_t comm_set = -1;      // transfer / collective: index into comm_sets
  int32_t label = -1;         // index into labels ("fwd L3 attention")
  int32_t tag = -1;           // the caller's grouping (the lowering: the microbatch); -1 none
  double duration_s = 0;      // compute only
  double bytes = 0;           // transfer / collective payload (per participant for collectives)
  // Device memory this task takes when it starts and gives back when it ends, on each
  // device it runs on (activations kept for the backward, gathered weights, buffers).
  double alloc_bytes = 0;
  double free_bytes = 0;
};

class TaskGraph {
 public:
  DeviceId add_device(const std::string& name, std::vector<int> hosts);
  StreamId stream(const std::string& name);  // id of a stream name, created on first use
  LabelId label(const std::string& text);    // interned
  CommSetId add_comm_set(CommSet set);
  ParticipantsId add_participants(const std::vector<DeviceId>& devices);

  // `tag`: a grouping the caller reads back from the task (Task::tag), -1 for none.
  TaskId add_compute(DeviceId device, StreamId stream, double duration_s, LabelId label, int tag);
  TaskId add_transfer(DeviceId src_device, StreamId stream, CommSetId comm_set, double bytes, LabelId label, int tag);
  TaskId add_collective(ParticipantsId participants, StreamId stream, CollectiveOp op, CommSetId comm_set, double bytes,
                        LabelId label, int tag);
  void depend(TaskId before, TaskId after);  // `after` starts only once `before` is done
  void add_memory(TaskId id, double alloc_bytes, double free_bytes);
  Device& device(int id) { return devices_.at(id); }
  // Copies every part of `other` in after this graph's (its devices named `prefix` + their
  // name, its streams and labels merged by name): several jobs in one run. Returns the id
  // here of `other`'s task 0; its task i is that + i. Call before finalize().
  TaskId append(const TaskGraph& other, const std::string& prefix);

  // Builds the successor lists; call once after the last task or edge is added.
  void finalize();

  size_t size() const { return tasks_.size(); }
  const Task& task(TaskId id) const { return tasks_[id]; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<std::string>& stream_names() const { return stream_names_; }
  const std::vector<std::string>& labels() const { return labels_; }
  const CommSet& comm_set(int id) const { return comm_sets_[id]; }
  const std::vector<CommSet>& comm_sets() const { return comm_sets_; }
  const std::vector<int>& participants(int id) const { return participant_sets_[id]; }
  // Devices whose streams a task occupies: one for compute and transfer, all for collectives.
  std::vector<int> devices_of(const Task& t) const;

  // After finalize(): successors of task i are succ[succ_begin[i] .. succ_begin[i+1]).
  const std::vector<int32_t>& succ_begin() const { return succ_begin_; }
  const std::vector<TaskId>& successors() const { return succ_; }
  const std::vector<int32_t>& indegree() const { return indegree_; }
  size_t edge_count() const { return edges_.size(); }

 private:
  TaskId push(Task t);

  std::vector<Task> tasks_;
  std::vector<Device> devices_;
  std::vector<std::string> stream_names_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, int> label_ids_;
  std::vector<CommSet> comm_sets_;
  std::vector<std::vector<int>> participant_sets_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
  std::vector<int32_t> succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<int32_t> indegree_;
};

}  // namespace dejavu::sim
