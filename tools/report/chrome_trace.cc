#include "tools/report/chrome_trace.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/json_text.h"
#include "sim/memory.h"

namespace dejavu::report {

using namespace sim;

namespace {
std::string quoted(const std::string& s) { return json_text(nlohmann::json(s)); }

// A device standing for several GPUs says so: "stage0.dp0 (16 GPUs)".
std::string process_name(const Device& d) {
  if (d.hosts.size() <= 1) return d.name;
  return d.name + " (" + std::to_string(d.hosts.size()) + " GPUs)";
}

const char* category(const Task& t) {
  switch (t.kind) {
    case TaskKind::Compute:
      return "compute";
    case TaskKind::Transfer:
      return "transfer";
    case TaskKind::Collective:
      return "collective";
  }
  return "";
}
}  // namespace

void write_chrome_trace(std::ostream& out, const TaskGraph& g, const Result& r) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (size_t d = 0; d < g.devices().size(); ++d) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << d
        << ",\"args\":{\"name\":" << quoted(process_name(g.devices()[d])) << "}}";
    for (size_t s = 0; s < g.stream_names().size(); ++s) {
      sep();
      out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << d << ",\"tid\":" << s
          << ",\"args\":{\"name\":" << quoted(g.stream_names()[s]) << "}}";
    }
  }
  std::vector<std::string> labels;
  labels.reserve(g.labels().size());
  for (const auto& l : g.labels()) labels.push_back(quoted(l));
  char buf[160];
  for (size_t i = 0; i < g.size(); ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    for (int d : g.devices_of(t)) {
      sep();
      // Microseconds with nanosecond resolution, as the format expects.
      std::snprintf(buf, sizeof buf, ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d", r.start_s[i] * 1e6,
                    (r.end_s[i] - r.start_s[i]) * 1e6, d, t.stream);
      out << "{\"name\":" << labels[t.label] << ",\"cat\":\"" << category(t) << "\"" << buf
          << ",\"args\":{\"microbatch\":" << t.tag;
      if (t.kind != TaskKind::Compute) {
        std::snprintf(buf, sizeof buf, ",\"bytes\":%.0f", t.bytes);
        out << buf;
      }
      out << "}}";
    }
  }
  // Memory as a counter track per device (GiB), where tasks allocate or free.
  const auto memory = memory_profiles(g, r, true);
  for (size_t d = 0; d < memory.size(); ++d) {
    if (memory[d].timeline.size() <= 1 && memory[d].resident_bytes == 0) continue;
    for (const auto& [time, bytes] : memory[d].timeline) {
      sep();
      std::snprintf(buf, sizeof buf,
                    "{\"name\":\"memory\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%zu,\"args\":{\"GiB\":%.6f}}", time * 1e6, d,
                    bytes / 1073741824.0);
      out << buf;
    }
  }
  out << "\n]}\n";
}

}  // namespace dejavu::report
