// Quantities as people write them in configs: "300 GB/s", "200 Gbps", "1.5 us", "80 GiB",
// "312 TFLOPS". Everything inside dejavu is SI base units in double: seconds, bytes,
// bytes per second, FLOP per second.
#pragma once

#include <string>
#include <string_view>

#include "sim/error.h"

namespace dejavu::units {

enum class Dimension { Time, Bytes, Rate, FlopRate };

// Thrown when text is not a valid quantity; the message says what would be valid.
// Callers that know the file position rethrow it as a ConfigError.
class UnitError : public Error {
 public:
  explicit UnitError(const std::string& what) : Error(what) {}
};

double parse(std::string_view text, Dimension dim);

inline double parse_time(std::string_view t) { return parse(t, Dimension::Time); }
inline double parse_bytes(std::string_view t) { return parse(t, Dimension::Bytes); }
inline double parse_rate(std::string_view t) { return parse(t, Dimension::Rate); }
inline double parse_flop_rate(std::string_view t) { return parse(t, Dimension::FlopRate); }

// An example of a valid value, used in error messages ("a rate such as \"400 Gbps\"").
std::string example(Dimension dim);

// Human-readable formatting for summaries: "12.3 ms", "1.50 GB", "300 GB/s".
std::string format_time(double seconds);
std::string format_bytes(double bytes);
std::string format_rate(double bytes_per_second);

}  // namespace dejavu::units
