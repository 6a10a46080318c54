#include "strategies/compression/compressor.h"

#include <memory>

namespace dejavu::strategies {

// One factory per file in this folder.
std::unique_ptr<Compressor> make_no_compression();
std::unique_ptr<Compressor> make_top_k();
std::unique_ptr<Compressor> make_one_bit();
std::unique_ptr<Compressor> make_terngrad();
std::unique_ptr<Compressor> make_power_sgd();

Registry<Compressor>& compressors() {
  static Registry<Compressor> registry("compression");
  return registry;
}

void register_compressors() {
  auto& r = compressors();
  r.add("none", "the dense gradient", make_no_compression);
  r.add("topk", "the `density` largest values and their 32-bit indices, error feedback", make_top_k);
  r.add("1bit", "signs scaled by the mean magnitude, error feedback (1-bit SGD)", make_one_bit);
  r.add("terngrad", "stochastic ternary -s, 0, +s at two bits an element (TernGrad)", make_terngrad);
  r.add("powersgd", "rank-`rank` factors of each weight matrix, warm-started, error feedback (PowerSGD)",
        make_power_sgd);
}

Compression dense_price(double bytes, sim::DType dtype) {
  Compression out;
  out.wire_bytes = bytes;
  out.kernel = {sim::OpClass::Elementwise, 0, 0, dtype};
  return out;
}

}  // namespace dejavu::strategies
