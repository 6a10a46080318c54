#include "strategies/schedules/chimera.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "strategies/schedules/one_f_one_b.h"

namespace dejavu::strategies {

// The merge of the two pipelines: each pipeline's stage keeps its 1F1B order over its half
// of the microbatches, and a GPU, when free, runs whichever of its two next items can start
// first, in unit time (a forward or a backward one slot); at a tie, the item further along
// its pipeline (a deeper forward, a shallower backward). With equal forward and backward
// times this reaches Chimera's (p - 2) / 2 slots of bubble per pass.
std::vector<WorkItem> Chimera::order(int stage, int p, int m, int) const {
  if (auto it = merged_.find({p, m}); it != merged_.end()) return it->second.at(stage);
  const int half = m / 2;
  const OneFOneB one;
  // Queue (gpu, pipeline): that pipeline's stage on the GPU, its 1F1B order.
  struct Queue {
    int pipe, k;  // pipeline, stage within it
    std::vector<WorkItem> items;
    size_t next = 0;
  };
  std::vector<std::array<Queue, 2>> q(p);
  for (int g = 0; g < p; ++g)
    for (int c = 0; c < 2; ++c) {
      Queue& x = q[g][c];
      x.pipe = c;
      x.k = c == 0 ? g : p - 1 - g;
      const int count = c == 0 ? half : m - half;
      for (WorkItem w : one.order(x.k, p, count, 1)) {
        w.microbatch += c * half;
        w.chunk = c;
        x.items.push_back(w);
      }
    }
  // When each (pipeline, stage, microbatch, backward) ends; -1 while not yet run.
  std::map<std::tuple<int, int, int, bool>, long> end;
  std::vector<long> free_at(p, 0);
  std::vector<std::vector<WorkItem>> out(p);
  size_t left = 0;
  for (const auto& g : q) left += g[0].items.size() + g[1].items.size();
  for (; left > 0; --left) {
    long best_start = -1;
    int best_g = -1, best_c = -1, best_rank = 0;
    for (int g = 0; g < p; ++g)
      for (int c = 0; c < 2; ++c) {
        const Queue& x = q[g][c];
        if (x.next >= x.items.size()) continue;
        const WorkItem& w = x.items[x.next];
        long ready = free_at[g];
        bool blocked = false;
        auto need = [&](int k, bool backward) {
          auto it = end.find({x.pipe, k, w.microbatch, backward});
          if (it == end.end()) {
            blocked = true;
          } else {
            ready = std::max(ready, it->second);
          }
        };
        if (!w.backward && x.k > 0) need(x.k - 1, false);
        if (w.backward) {
          need(x.k, false);
          if (x.k + 1 < p) need(x.k + 1, true);
        }
        if (blocked) continue;
        const int rank = w.backward ? x.k : -x.k;
        if (best_g < 0 || ready < best_start || (ready == best_start && (rank < best_rank))) {
          best_start = ready;
          best_g = g;
          best_c = c;
          best_rank = rank;
        }
      }
    Queue& x = q[best_g][best_c];
    const WorkItem& w = x.items[x.next++];
    end[{x.pipe, x.k, w.microbatch, w.backward}] = best_start + 1;
    free_at[best_g] = best_start + 1;
    out[best_g].push_back(w);
  }
  return (merged_[{p, m}] = std::move(out)).at(stage);
}

}  // namespace dejavu::strategies
