#include "strategies/schedules/interleaved_one_f_one_b.h"

#include <algorithm>

namespace dejavu::strategies {

std::vector<WorkItem> InterleavedOneFOneB::order(int stage, int p, int m, int v) const {
  const int total = m * v;
  // The k-th forward (backward) of this GPU: microbatches in groups of p per chunk, as in
  // Megatron-LM's get_model_chunk_id; backwards visit the chunks in reverse.
  auto item = [&](int k, bool backward) {
    const int in_group = k % (p * v);
    int chunk = in_group / p;
    if (backward) chunk = v - 1 - chunk;
    return WorkItem{(k / (p * v)) * p + k % p, backward, chunk};
  };
  const int warmup = v == 1 ? std::min(p - stage - 1, total) : std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  std::vector<WorkItem> out;
  out.reserve(2 * total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(item(f, false));
  while (f < total) {
    out.push_back(item(f++, false));
    out.push_back(item(b++, true));
  }
  while (b < total) out.push_back(item(b++, true));
  return out;
}

}  // namespace dejavu::strategies
