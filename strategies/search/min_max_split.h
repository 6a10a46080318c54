// Splitting whole units of work over workers of different speeds so that the slowest
// finishes first: the counts m_r (each at least one unit, adding up to `total`) that
// minimise max_r (fixed_r + m_r each_r). Greedy: each next unit to the worker that would
// end soonest with it; for costs linear in the count this is optimal (an exchange argument:
// brute force agrees in the tests). Microbatches over data-parallel replicas
// (replica_balance.h) and layers over pipeline stages (stage_balance.h).
#pragma once

#include <vector>

namespace dejavu::strategies::search {

// Counts in multiples of `unit`; empty when `total` is not a multiple of it or there are
// more workers than units. `fixed` may be empty (all zero).
std::vector<int> min_max_counts(const std::vector<double>& each, const std::vector<double>& fixed, int total,
                                int unit = 1);

}  // namespace dejavu::strategies::search
