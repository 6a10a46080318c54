#pragma once

namespace dejavu::strategies {

// Fills the core's registries (pipeline schedules, sync topologies). Safe to call twice;
// the searchers' registry is strategies::search::register_searchers().
void register_builtins();

}  // namespace dejavu::strategies
