// Fills the training registries: update rules (rules/) and aggregators (aggregators/).
#pragma once

namespace dejavu::strategies {

void register_training();

}  // namespace dejavu::strategies
