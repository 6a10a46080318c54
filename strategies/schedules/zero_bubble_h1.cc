#include "strategies/schedules/zero_bubble_h1.h"

#include <algorithm>

namespace dejavu::strategies {

std::vector<WorkItem> ZeroBubbleH1::order(int stage, int p, int m, int) const {
  const int warmup = std::min(p - stage - 1, m);
  std::vector<WorkItem> out;
  out.reserve(3 * m);
  int f = 0, b = 0, w = 0;
  auto F = [&] { out.push_back({f++, false, 0, BackwardPart::Whole}); };
  auto B = [&] { out.push_back({b++, true, 0, BackwardPart::Input}); };
  auto W = [&] { out.push_back({w++, true, 0, BackwardPart::Weight}); };
  while (f < warmup) F();
  while (f < m) {
    F();
    B();
    W();
  }
  while (b < m) {  // drain: a pending W fills the wait for the next B's gradient
    if (w < b) W();
    B();
  }
  while (w < m) W();
  return out;
}

}  // namespace dejavu::strategies
