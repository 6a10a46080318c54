// The small text parsers: quantities with units, nccl-tests sizes, convergence data specs,
// shards.
#include "sim/units.h"
#include "strategies/training/convergence.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/collective_sweep.h"
#include "tools/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dejavu;
  const std::string t = fuzz::text(data, size);
  for (auto dim : {units::Dimension::Time, units::Dimension::Bytes, units::Dimension::Rate, units::Dimension::FlopRate})
    fuzz::accept_or_refuse([&] { units::parse(t, dim); });
  fuzz::accept_or_refuse([&] { tools::parse_message_size("--min", t); });
  fuzz::accept_or_refuse([&] { strategies::parse_data_spec(t); });
  fuzz::accept_or_refuse([&] { tools::parse_shard(t); });
  return 0;
}
