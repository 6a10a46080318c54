#include "strategies/schedules/terapipe.h"

namespace dejavu::strategies {

std::vector<WorkItem> TeraPipe::order(int, int, int items, int) const {
  std::vector<WorkItem> out;
  out.reserve(2 * items);
  for (int j = 0; j < items; ++j) out.push_back({j, false, 0});
  for (int j = items; j-- > 0;) out.push_back({j, true, 0});
  return out;
}

}  // namespace dejavu::strategies
