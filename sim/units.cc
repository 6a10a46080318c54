#include "sim/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dejavu::units {
namespace {

struct UnitDef {
  std::string_view symbol;
  double factor;
};

// Decimal prefixes mean powers of ten, binary ones (KiB, MiB...) powers of two, as in
// the SI/IEC convention. Rates in bits ("Gbps", "Gb/s") are converted to bytes.
constexpr std::array kTime = {UnitDef{"s", 1.0},   UnitDef{"ms", 1e-3},  UnitDef{"us", 1e-6}, UnitDef{"µs", 1e-6},
                              UnitDef{"ns", 1e-9}, UnitDef{"min", 60.0}, UnitDef{"h", 3600.0}};
constexpr std::array kBytes = {
    UnitDef{"B", 1.0},         UnitDef{"KB", 1e3},           UnitDef{"MB", 1e6},
    UnitDef{"GB", 1e9},        UnitDef{"TB", 1e12},          UnitDef{"KiB", 1024.0},
    UnitDef{"MiB", 1048576.0}, UnitDef{"GiB", 1073741824.0}, UnitDef{"TiB", 1099511627776.0}};
constexpr std::array kRate = {UnitDef{"B/s", 1.0},         UnitDef{"KB/s", 1e3},           UnitDef{"MB/s", 1e6},
                              UnitDef{"GB/s", 1e9},        UnitDef{"TB/s", 1e12},          UnitDef{"KiB/s", 1024.0},
                              UnitDef{"MiB/s", 1048576.0}, UnitDef{"GiB/s", 1073741824.0}, UnitDef{"bps", 0.125},
                              UnitDef{"Kbps", 1e3 / 8},    UnitDef{"Mbps", 1e6 / 8},       UnitDef{"Gbps", 1e9 / 8},
                              UnitDef{"Tbps", 1e12 / 8},   UnitDef{"b/s", 0.125},          UnitDef{"Kb/s", 1e3 / 8},
                              UnitDef{"Mb/s", 1e6 / 8},    UnitDef{"Gb/s", 1e9 / 8},       UnitDef{"Tb/s", 1e12 / 8}};
constexpr std::array kFlopRate = {UnitDef{"FLOPS", 1.0},   UnitDef{"KFLOPS", 1e3},  UnitDef{"MFLOPS", 1e6},
                                  UnitDef{"GFLOPS", 1e9},  UnitDef{"TFLOPS", 1e12}, UnitDef{"PFLOPS", 1e15},
                                  UnitDef{"FLOP/s", 1.0},  UnitDef{"GFLOP/s", 1e9}, UnitDef{"TFLOP/s", 1e12},
                                  UnitDef{"PFLOP/s", 1e15}};

template <size_t N>
std::pair<const UnitDef*, size_t> as_span(const std::array<UnitDef, N>& a) {
  return {a.data(), N};
}

std::pair<const UnitDef*, size_t> table(Dimension dim) {
  switch (dim) {
    case Dimension::Time:
      return as_span(kTime);
    case Dimension::Bytes:
      return as_span(kBytes);
    case Dimension::Rate:
      return as_span(kRate);
    case Dimension::FlopRate:
      return as_span(kFlopRate);
  }
  return as_span(kTime);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string dimension_noun(Dimension dim) {
  switch (dim) {
    case Dimension::Time:
      return "a time";
    case Dimension::Bytes:
      return "a size";
    case Dimension::Rate:
      return "a rate";
    case Dimension::FlopRate:
      return "a compute rate";
  }
  return "a quantity";
}

std::string unit_list(Dimension dim) {
  auto [defs, n] = table(dim);
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += defs[i].symbol;
  }
  return out;
}

}  // namespace

std::string example(Dimension dim) {
  switch (dim) {
    case Dimension::Time:
      return "\"1.5 us\"";
    case Dimension::Bytes:
      return "\"80 GiB\"";
    case Dimension::Rate:
      return "\"400 Gbps\"";
    case Dimension::FlopRate:
      return "\"312 TFLOPS\"";
  }
  return "";
}

double parse(std::string_view text, Dimension dim) {
  std::string_view s = trim(text);
  const std::string expected = "expected " + dimension_noun(dim) + " such as " + example(dim);
  const std::string got = "got \"" + std::string(text) + "\"";
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) throw UnitError(expected + ", " + got);
  std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) throw UnitError(expected + " (the unit is missing), " + got);
  auto [defs, n] = table(dim);
  for (size_t i = 0; i < n; ++i) {
    if (defs[i].symbol == unit) {
      double v = value * defs[i].factor;
      if (!std::isfinite(v) || v < 0) throw UnitError(expected + " (a finite, non-negative value), " + got);
      return v;
    }
  }
  throw UnitError(expected + "; \"" + std::string(unit) + "\" is not one of " + unit_list(dim) + ", " + got);
}

namespace {
std::string with_prefix(double v, const char* const* names, const double* scales, int n) {
  int i = n - 1;
  while (i > 0 && std::fabs(v) < scales[i]) --i;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s", v / scales[i], names[i]);
  return buf;
}
}  // namespace

std::string format_time(double s) {
  static const char* names[] = {"ns", "us", "ms", "s"};
  static const double scales[] = {1e-9, 1e-6, 1e-3, 1.0};
  char buf[32];
  if (std::fabs(s) < 1e-12) return "0 ns";   // below a picosecond: rounding, not time
  if (std::isfinite(s) && s >= 2 * 86400) {  // training runs: days and hours read better
    std::snprintf(buf, sizeof buf, "%.3g days", s / 86400);
    return buf;
  }
  if (std::isfinite(s) && s >= 3600) {
    std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);
    return buf;
  }
  return with_prefix(s, names, scales, 4);
}

std::string format_bytes(double b) {
  static const char* names[] = {"B", "KB", "MB", "GB", "TB"};
  static const double scales[] = {1.0, 1e3, 1e6, 1e9, 1e12};
  return with_prefix(b, names, scales, 5);
}

std::string format_rate(double r) {
  static const char* names[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
  static const double scales[] = {1.0, 1e3, 1e6, 1e9, 1e12};
  return with_prefix(r, names, scales, 5);
}

}  // namespace dejavu::units
