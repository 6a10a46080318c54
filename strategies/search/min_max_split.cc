#include "strategies/search/min_max_split.h"

#include <functional>
#include <queue>
#include <utility>

namespace dejavu::strategies::search {

std::vector<int> min_max_counts(const std::vector<double>& each, const std::vector<double>& fixed, int total,
                                int unit) {
  const int n = static_cast<int>(each.size());
  if (unit < 1 || n == 0 || total % unit != 0 || total / unit < n) return {};
  auto fixed_of = [&](int r) { return fixed.empty() ? 0.0 : fixed[r]; };
  std::vector<int> units(n, 1);
  using Next = std::pair<double, int>;  // (when worker r would end with one more unit, r)
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
  for (int r = 0; r < n; ++r) next.emplace(fixed_of(r) + 2 * unit * each[r], r);
  for (int left = total / unit - n; left > 0; --left) {
    const int r = next.top().second;
    next.pop();
    ++units[r];
    next.emplace(fixed_of(r) + (units[r] + 1) * unit * each[r], r);
  }
  for (int& u : units) u *= unit;
  return units;
}

}  // namespace dejavu::strategies::search
