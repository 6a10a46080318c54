#include "strategies/schedules/one_f_one_b.h"

#include <algorithm>

namespace dejavu::strategies {

std::vector<WorkItem> OneFOneB::order(int stage, int stages, int m, int) const {
  const int warmup = std::min(stages - stage - 1, m);
  std::vector<WorkItem> out;
  out.reserve(2 * m);
  int next_f = 0, next_b = 0;
  for (; next_f < warmup; ++next_f) out.push_back({next_f, false, 0});
  while (next_f < m) {
    out.push_back({next_f++, false, 0});
    out.push_back({next_b++, true, 0});
  }
  while (next_b < m) out.push_back({next_b++, true, 0});
  return out;
}

}  // namespace dejavu::strategies
