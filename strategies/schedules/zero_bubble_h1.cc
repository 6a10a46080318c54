#include "strategies/schedules/zero_bubble_h1.h"

#include <algorithm>

namespace dejavu::strategies {

std::vector<WorkItem> ZeroBubbleH1::order(int stage, int p, int m, int) const {
  std::vector<WorkItem> out;
  out.reserve(3 * m);
  int f = 0, b = 0, w = 0;
  auto F = [&] { out.push_back({f++, false, 0, BackwardPart::Whole}); };
  auto B = [&] { out.push_back({b++, true, 0, BackwardPart::Input}); };
  auto W = [&] { out.push_back({w++, true, 0, BackwardPart::Weight}); };
  // Qi et al. 2023 (ZB-H1): 1F1B's warm-up, then stage i holds back its first i weight
  // passes, so its input gradients reach the stage before sooner; the held W's fill the
  // drain, where 1F1B's stage waits for gradients. Bubble (p-1)(F+B-W), a third of 1F1B's
  // when F = B = W; stage 0 still holds at most p microbatches' activations.
  while (f < std::min(p - stage - 1, m)) F();
  for (int k = 0; k < stage && f < m; ++k) {
    F();
    B();
  }
  while (f < m) {
    F();
    B();
    W();
  }
  while (b < m) {
    B();
    W();
  }
  while (w < m) W();
  return out;
}

}  // namespace dejavu::strategies
