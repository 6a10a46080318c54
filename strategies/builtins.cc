#include "strategies/builtins.h"

#include "strategies/compression/compressor.h"
#include "strategies/data_parallel.h"
#include "strategies/recovery/recovery_policy.h"
#include "strategies/schedules/chimera.h"
#include "strategies/schedules/gpipe.h"
#include "strategies/schedules/interleaved_one_f_one_b.h"
#include "strategies/schedules/one_f_one_b.h"
#include "strategies/schedules/pipedream.h"
#include "strategies/schedules/terapipe.h"
#include "strategies/schedules/zero_bubble_h1.h"

namespace dejavu::strategies {

Registry<PipelineSchedule>& schedules() {
  static Registry<PipelineSchedule> registry("schedule");
  return registry;
}

void register_builtins() {
  schedules().add("gpipe", "all forwards, then all backwards (GPipe)", [] { return std::make_unique<GPipe>(); });
  register_sync_topologies();
  register_compressors();
  register_recovery_policies();
  schedules().add("interleaved-1f1b", "1F1B over v model chunks per GPU (virtual_stages); bubble / v (Megatron-LM)",
                  [] { return std::make_unique<InterleavedOneFOneB>(); });
  schedules().add("zb-h1", "1F1B with backward split into input (B) and weight (W) gradients, W filling bubbles",
                  [] { return std::make_unique<ZeroBubbleH1>(); });
  schedules().add("1f1b", "one forward, one backward after p-i-1 warm-up forwards (PipeDream-Flush)",
                  [] { return std::make_unique<OneFOneB>(); });
  schedules().add("chimera", "two 1F1B pipelines in opposite directions, each GPU holding a stage of both (Chimera)",
                  [] { return std::make_unique<Chimera>(); });
  schedules().add("pipedream", "1F1B without a flush, a step per microbatch, weight stashing (PipeDream)",
                  [] { return std::make_unique<PipeDream>(); });
  schedules().add("terapipe",
                  "token slices of each sequence pipelined, backwards in reverse (TeraPipe; plan token_slices)",
                  [] { return std::make_unique<TeraPipe>(); });
  schedules().add("pipedream-2bw", "1F1B without a flush, a step per iteration on 1-step-stale weights (PipeDream-2BW)",
                  [] { return std::make_unique<PipeDream2BW>(); });
}

}  // namespace dejavu::strategies
