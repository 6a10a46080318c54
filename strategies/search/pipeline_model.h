// The evaluator's fast path: the iteration of a plan inside the search space (space.h)
// computed without building a task graph. It prices each virtual stage's work items from
// block_items() (the prices lower() uses), walks every GPU stage's schedule order with
// the list scheduler's rule (a task starts when its inputs are done and its stream is
// free: compute, pipeline sends, data-parallel collectives), then the gradient sync and
// optimizer step, and replays the memory events as sim::memory_profiles does. On every
// plan it takes it agrees with lowering (fused) + the analytic engine; a test holds it to
// that over whole search spaces. Plans it does not take (expert or context parallelism,
// buckets, compression, sync topologies, replicas that price differently) return false.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include "sim/collective.h"
#include "strategies/lowering.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

class PipelineModel {
 public:
  PipelineModel(const Problem& problem, std::string collective_algorithm = "ring");
  // Fills `out` and returns true, or returns false when the plan needs the full lowering.
  // Throws ConfigError for a plan that breaks a rule (as lower() would).
  bool score(const Plan& plan, Score& out);
  // Whether score() prices the plan itself, without pricing it (a plan that breaks a rule
  // counts: score() refuses it at once).
  bool takes(const Plan& plan);

 private:
  struct Work;
  struct Timeline;
  static bool walks(const Plan& plan);  // the knobs score() walks, whatever the cluster
  Work work(const Plan& plan);
  void stage_work(const Plan& plan, int s, const std::vector<int>& layers_of, Work& w);
  bool walk(const Plan& plan, const Work& w, Timeline& t);
  static double ready_s(const WorkItem& w, int vs, int V, const Timeline& t);
  void run_item(const Plan& plan, const Work& w, Timeline& t, const WorkItem& item, int s, double ready);
  double zero3_item(const Plan& plan, const Work& w, Timeline& t, int s, int vs, int kind, double ready);
  double finish_stage(const Plan& plan, const Work& w, Timeline& t, int s);
  const std::vector<BlockItems>& blocks(const Plan& plan, int stage);
  bool one_class(const Plan& plan);
  double collective_s(const Plan& plan, int stage, int op, double bytes);  // over the dp ring
  double send_s(const Plan& plan, int from, int to, double bytes);
  const std::vector<std::vector<WorkItem>>& orders(const Plan& plan);
  Problem problem_;
  std::string algorithm_;
  std::unique_ptr<sim::CollectiveAlgorithm> collective_;
  // Caches: what repeats across the plans of a search.
  std::map<std::pair<int, int>, int> stage_kind_;  // (stage's tp, its first GPU) -> GPUs' signature id
  std::map<std::string, int> signatures_;
  std::map<std::tuple<int, int, int, int, int, int>, std::vector<BlockItems>> blocks_;
  std::map<std::vector<int>, bool> one_class_;                             // per stages' tensor degrees
  std::vector<int> degrees_;                                               // one_class's key, reused
  std::map<std::tuple<int, int, int, int, double>, double> collective_s_;  // (first GPU, stride, dp, op, bytes)
  std::map<std::tuple<int, int, double>, double> send_s_;                  // (from GPU, to GPU, bytes)
  std::map<std::tuple<std::string, int, int, int>, std::vector<std::vector<WorkItem>>> orders_;
};

}  // namespace dejavu::strategies::search
