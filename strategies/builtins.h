#pragma once

namespace dejavu::strategies {

// Fills this folder's registries (pipeline schedules). Safe to call twice.
void register_builtins();

}  // namespace dejavu::strategies
