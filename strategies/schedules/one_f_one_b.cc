#include "strategies/schedules/one_f_one_b.h"

#include <algorithm>

namespace dejavu::strategies {

std::vector<WorkItem> OneFOneB::order(int stage, int stages, int m) const {
  const int warmup = std::min(stages - stage - 1, m);
  std::vector<WorkItem> out;
  out.reserve(2 * m);
  int next_f = 0, next_b = 0;
  for (; next_f < warmup; ++next_f) out.push_back({next_f, false});
  while (next_f < m) {
    out.push_back({next_f++, false});
    out.push_back({next_b++, true});
  }
  while (next_b < m) out.push_back({next_b++, true});
  return out;
}

}  // namespace dejavu::strategies
