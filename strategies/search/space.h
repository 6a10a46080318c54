// The plans a search may choose: tensor, pipeline and data-parallel degrees whose product
// is the cluster's GPU count, expert parallelism (models with experts or embedding tables),
// microbatch size (powers of two up to a cap, and each replica's whole batch at once),
// pipeline schedule (and model chunks),
// recomputation, ZeRO stage, sequence parallelism, where every server has a host side
// optimizer offload (to CPU memory, and NVMe when given), and for sequences of kLongContext
// tokens or more context parallelism (cp up to a server's GPUs, its keys and values gathered
// or passed around a ring). The knobs that tune a plan rather than shape it (recomputation
// per stage, overlap switches, buckets, sync topologies, Chimera and TeraPipe) are the
// second tier every searcher's best plans are refined over (refine.h).
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "strategies/plan.h"
#include "strategies/search/evaluator.h"

namespace dejavu::strategies::search {

struct Space {
  std::vector<int> tp;        // divisors of the heads, at most a server's GPUs
  std::vector<int> pp;        // at most the layers
  std::vector<int> ep = {1};  // with experts: divisors of the GPU count that divide them
  std::vector<int> cp = {1};  // long sequences: divisors of the GPU count up to a server's
  std::vector<std::string> cp_comm = {"all-gather", "ring"};  // tried with cp > 1
  std::vector<int> micro_batch;                               // powers of two up to max_micro_batch
  // Not searched: the asynchronous schedules (pipedream, pipedream-2bw) change the update
  // rule; TeraPipe and Chimera leave the fast path (pipeline_model.h) for the engine, and with
  // Chimera in the space grid over GPT-3 175B on 1024 GPUs took 29 s instead of 3.2 s.
  std::vector<std::string> schedules = {"1f1b", "gpipe", "interleaved-1f1b", "zb-h1"};
  std::vector<int> chunks = {2};  // virtual_stages tried with interleaved-1f1b
  std::vector<std::string> recompute = {"none", "selective", "full"};
  std::vector<int> zero = {0, 1, 2, 3};
  std::vector<bool> sequence_parallel = {false, true};
  std::vector<std::string> offload = {""};  // plan.offload_optimizer: "" (none), cpu, nvme
};

// Sequences this long (tokens) or longer are split by context parallelism in the space.
constexpr int kLongContext = 16384;

// The default space for a problem; `max_micro_batch` caps the microbatch size.
Space default_space(const Problem& problem, int max_micro_batch = 16);

// A plan with the problem's global batch and the given degrees (schedule 1f1b, no
// recomputation, ZeRO 0; dp what the cluster's GPUs leave), or false if the degrees cannot
// cover the cluster or batch.
bool make_plan(const Problem& problem, int tp, int pp, int micro_batch, Plan& out, int cp = 1);

// The microbatch sizes tried with tp x pp: the space's, and each replica's whole batch.
std::vector<int> micro_batch_options(const Problem& problem, const Space& space, int tp, int pp, int cp = 1);

// The schedules (and model chunks) tried with pp stages and m microbatches a replica.
std::vector<std::pair<std::string, int>> schedules_of(const Space& space, int pp, int m, int layers);

// Every plan of the space, in a fixed order (degrees, microbatch, schedule, recompute,
// ZeRO, sequence parallelism). Plans that break a rule (e.g. interleaving with too few
// microbatches) are left out.
std::vector<Plan> enumerate(const Problem& problem, const Space& space);

// "tp4 pp2 dp4 mb1 1f1b rc=selective zero1 sp stages=[12,12]": one line for tables.
std::string describe(const Plan& plan);

// The plan as a YAML file `dejavu simulate --plan` accepts.
void write_plan_yaml(std::ostream& out, const Plan& plan, const std::string& comment);

}  // namespace dejavu::strategies::search
