#include "sim/fp8_recipe.h"

#include <stdexcept>

namespace dejavu::sim {

const std::array<Fp8RecipeEntry, 3>& fp8_recipes() {
  static const std::array<Fp8RecipeEntry, 3> entries = {{
      {"delayed", Fp8Recipe::Delayed, false},        // Transformer Engine's DelayedScaling
      {"tensorwise", Fp8Recipe::Tensorwise, false},  // Float8CurrentScaling
      {"mxfp8", Fp8Recipe::Mxfp8, true},             // MXFP8BlockScaling
  }};
  return entries;
}

int fp8_recipe_index(Fp8Recipe r) {
  for (int i = 0; i < kFp8Recipes; ++i)
    if (fp8_recipes()[i].recipe == r) return i;
  throw std::invalid_argument("the default fp8 recipe has no index; resolve it for a GPU first");
}

const char* to_string(Fp8Recipe r) {
  return r == Fp8Recipe::Default ? "default" : fp8_recipes()[fp8_recipe_index(r)].name;
}

bool parse_fp8_recipe(const std::string& name, Fp8Recipe* out) {
  for (const Fp8RecipeEntry& e : fp8_recipes())
    if (name == e.name) {
      *out = e.recipe;
      return true;
    }
  return false;
}

std::string fp8_recipe_names() { return fp8_recipe_names_on(true); }

bool block_scaled(Fp8Recipe r) { return fp8_recipes()[fp8_recipe_index(r)].block_scaled; }

bool runs_on(Fp8Recipe r, bool gpu_has_mx_formats) {
  return r == Fp8Recipe::Default || gpu_has_mx_formats || !block_scaled(r);
}

std::string fp8_recipe_names_on(bool gpu_has_mx_formats) {
  std::string out;
  for (const Fp8RecipeEntry& e : fp8_recipes())
    if (runs_on(e.recipe, gpu_has_mx_formats)) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

Fp8Recipe resolve_fp8_recipe(Fp8Recipe r, bool gpu_has_mx_formats) {
  if (r != Fp8Recipe::Default) return r;
  return gpu_has_mx_formats ? Fp8Recipe::Mxfp8 : Fp8Recipe::Delayed;
}

}  // namespace dejavu::sim
