#include "sim/fork_runner.h"

#include <unistd.h>

#include <cstring>
#include <string>

#include "sim/error.h"
#include "sim/process_pool.h"

namespace dejavu::sim {

namespace {

// Wire format: status byte (0 ok, 1 ModelError, 2 ConfigError-like Error), then either the
// message or the Result: engine name, makespan, three double vectors. Host byte order:
// parent and child are the same program.
void put_bytes(std::string& out, const void* p, size_t n) {
  if (n > 0) out.append(static_cast<const char*>(p), n);  // an empty vector's data() may be null
}
void put_u64(std::string& out, uint64_t v) { put_bytes(out, &v, sizeof v); }
void put_vec(std::string& out, const std::vector<double>& v) {
  put_u64(out, v.size());
  put_bytes(out, v.data(), v.size() * sizeof(double));
}

struct Reader {
  const std::string& in;
  size_t at = 0;
  void get(void* p, size_t n) {
    if (at + n > in.size()) throw Error("simulation child sent a truncated result");
    if (n == 0) return;
    std::memcpy(p, in.data() + at, n);
    at += n;
  }
  uint64_t u64() {
    uint64_t v;
    get(&v, sizeof v);
    return v;
  }
  std::string str() {
    std::string s(u64(), '\0');
    get(s.data(), s.size());
    return s;
  }
  std::vector<double> vec() {
    std::vector<double> v(u64());
    get(v.data(), v.size() * sizeof(double));
    return v;
  }
};

}  // namespace

namespace {
// The child's side: the Result, or what it threw, in the wire format above.
std::string serialise(const std::function<Result()>& simulate) {
  std::string out;
  try {
    const Result r = simulate();
    out.push_back(0);
    put_u64(out, r.engine.size());
    put_bytes(out, r.engine.data(), r.engine.size());
    put_bytes(out, &r.makespan_s, sizeof r.makespan_s);
    put_vec(out, r.start_s);
    put_vec(out, r.end_s);
    put_vec(out, r.link_bytes);
    put_vec(out, r.link_busy_s);
    put_vec(out, r.link_peak_flows);
    put_u64(out, r.activities);
    put_bytes(out, &r.stopped_at_s, sizeof r.stopped_at_s);
    put_u64(out, r.stop_cause.size());
    put_bytes(out, r.stop_cause.data(), r.stop_cause.size());
    put_vec(out, std::vector<double>(r.replay_in_full.begin(), r.replay_in_full.end()));
  } catch (const ModelError& e) {
    out.assign(1, 1);
    const std::string msg = e.what();
    put_u64(out, msg.size());
    out += msg;
  } catch (const std::exception& e) {
    out.assign(1, 2);
    const std::string msg = e.what();
    put_u64(out, msg.size());
    out += msg;
  }
  return out;
}

Result deserialise(const std::string& data) {
  Reader rd{data};
  char tag;
  rd.get(&tag, 1);
  if (tag == 1) throw ModelError(rd.str());
  if (tag == 2) throw Error(rd.str());
  Result r;
  r.engine = rd.str();
  rd.get(&r.makespan_s, sizeof r.makespan_s);
  r.start_s = rd.vec();
  r.end_s = rd.vec();
  r.link_bytes = rd.vec();
  r.link_busy_s = rd.vec();
  r.link_peak_flows = rd.vec();
  r.activities = rd.u64();
  rd.get(&r.stopped_at_s, sizeof r.stopped_at_s);
  r.stop_cause = rd.str();
  for (double id : rd.vec()) r.replay_in_full.push_back(static_cast<TaskId>(id));
  return r;
}
}  // namespace

Result run_in_child(const std::function<Result()>& simulate, double timeout_s) {
  ChildOutcome seen;
  run_children(
      1, PoolOptions{1, timeout_s, {}},
      [&](size_t, int out) {
        write_all(out, serialise(simulate));
        return 0;
      },
      [&](size_t, ChildOutcome o) { seen = std::move(o); });
  if (seen.timed_out) throw Error("simulation child did not finish within " + std::to_string(timeout_s) + " s");
  if (seen.signal != 0)
    throw Error("simulation child crashed (signal " + std::to_string(seen.signal) + ")" + seen.stderr_tail);
  if (seen.output.empty()) throw Error("simulation child exited without a result" + seen.stderr_tail);
  return deserialise(seen.output);
}

}  // namespace dejavu::sim
