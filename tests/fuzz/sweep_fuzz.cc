// A sweep YAML. It sits in a scratch folder where `repo/` leads to the repository, so
// its base files can be the shipped presets (repo/platforms/presets/...).
#include "tests/fuzz/fuzz_target.h"
#include "tools/sweep.h"

#ifndef DEJAVU_SOURCE_DIR
#define DEJAVU_SOURCE_DIR "."
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dejavu;
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("dejavu-fuzz-sweep-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::error_code ec;
    std::filesystem::create_directory_symlink(DEJAVU_SOURCE_DIR, d / "repo", ec);
    return d;
  }();
  const std::string path = (dir / "sweep.yaml").string();
  std::ofstream(path, std::ios::binary) << fuzz::text(data, size);
  return fuzz::accept_or_refuse([&] {
    const tools::SweepSpec spec = tools::load_sweep(path);
    if (spec.points() > 0) tools::point_at(spec, spec.points() - 1);
  });
}
