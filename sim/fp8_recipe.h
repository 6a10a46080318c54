// How Transformer Engine scales the tensors it casts to fp8 (Megatron-Core's --fp8-recipe,
// Transformer Engine's recipe classes). The recipe sets what a cast costs and, for MXFP8, which
// GEMM kernel runs:
//   delayed     DelayedScaling: one scale a tensor from the amax history of earlier steps; the
//               cast is one pass (Transformer Engine's default where MXFP8 is not supported)
//   tensorwise  Float8CurrentScaling: one scale a tensor from its own amax, an extra pass over
//               it before the cast (Megatron-Bridge's fp8_cs)
//   mxfp8       MXFP8BlockScaling: a scale per 32 elements (E8M0), block-scaled GEMM kernels;
//               Blackwell's tensor cores only (Transformer Engine's default there; fp8_mx)
// Default: Transformer Engine's choice for the GPU (mxfp8 where the GPU has MX formats, else
// delayed), resolved where the GPU is known (platforms::PerfModel).
#pragma once

#include <array>
#include <string>

namespace dejavu::sim {

enum class Fp8Recipe { Default, Delayed, Tensorwise, Mxfp8 };

struct Fp8RecipeEntry {
  const char* name;  // the plan key's value, Megatron-Core's --fp8-recipe name
  Fp8Recipe recipe;
  bool block_scaled;  // runs block-scaled GEMM kernels (MX formats)
};

// The named recipes (Default is not one: it is the absence of a name).
const std::array<Fp8RecipeEntry, 3>& fp8_recipes();
constexpr int kFp8Recipes = 3;
// Index of a named recipe in fp8_recipes(); Default has none (throws std::invalid_argument).
int fp8_recipe_index(Fp8Recipe r);
const char* to_string(Fp8Recipe r);  // "default" for Default
bool parse_fp8_recipe(const std::string& name, Fp8Recipe* out);
std::string fp8_recipe_names();  // "delayed, tensorwise, mxfp8"
bool block_scaled(Fp8Recipe r);  // runs block-scaled GEMM kernels (a named recipe)
// Whether a GPU with or without MX formats runs `r` (Default runs everywhere), and the names it runs.
bool runs_on(Fp8Recipe r, bool gpu_has_mx_formats);
std::string fp8_recipe_names_on(bool gpu_has_mx_formats);  // without MX: "delayed, tensorwise"
// The recipe a GPU runs: `r` when named, else Transformer Engine's default for it.
Fp8Recipe resolve_fp8_recipe(Fp8Recipe r, bool gpu_has_mx_formats);

}  // namespace dejavu::sim
