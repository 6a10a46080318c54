// Every CSV reader: kernel measurements, stage profiles, Megatron rows, measured bus
// bandwidths.
#include "platforms/calibration.h"
#include "sim/csv.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/collective_sweep.h"
#include "tools/megatron_validation.h"
#include "tools/profile_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dejavu;
  const std::string path = fuzz::as_file(fuzz::text(data, size), ".csv");
  fuzz::accept_or_refuse([&] { platforms::load_measurements(path); });
  fuzz::accept_or_refuse([&] { tools::load_stage_measurements(path); });
  fuzz::accept_or_refuse([&] { tools::load_megatron_csv(path); });
  fuzz::accept_or_refuse([&] {
    std::vector<tools::SweepRow> rows(3);
    rows[0].bytes = 1048576;
    rows[2].bytes = 1073741824;
    tools::attach_measurements(path, "A100-SXM-80GB", 8, rows);
  });
  return 0;
}
