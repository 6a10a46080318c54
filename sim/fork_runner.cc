#include "sim/fork_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <string>

#include "sim/error.h"

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

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

namespace {
// The last line the child wrote on stderr (SimGrid's assertion, say), for a one-line error.
std::string last_line(int fd) {
  std::string text(4096, '\0');
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > 4096 ? size - 4096 : 0;
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const size_t nl = text.find_last_of('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line.empty() ? "" : ": " + line;
}
}  // namespace

Result run_in_child(const std::function<Result()>& simulate, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("cannot create a pipe for the simulation child");
  // The child's stderr goes to a file of its own: whatever SimGrid prints as it dies is
  // read back as one line, never shown as it came.
  const int err = ::memfd_create("dejavu-child-stderr", MFD_CLOEXEC);
  std::fflush(nullptr);  // or the child would write the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("cannot fork a simulation child");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed (a sweep's timeout) takes it along
    if (::getppid() == 1) ::_exit(3);    // ... even one killed before the line above ran
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    ::close(fds[0]);
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
      put_u64(out, r.activities);
      put_bytes(out, &r.stopped_at_s, sizeof r.stopped_at_s);
      put_u64(out, r.stop_cause.size());
      put_bytes(out, r.stop_cause.data(), r.stop_cause.size());
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
    write_all(fds[1], out);
    ::close(fds[1]);
    ::_exit(0);  // no destructors, no atexit handlers of the parent's state
  }
  ::close(fds[0 + 1]);
  std::string data;
  char buf[1 << 16];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // re-check the deadline
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string why = err >= 0 ? last_line(err) : "";
  if (err >= 0) ::close(err);
  if (timed_out)
    throw Error("simulation child did not finish within " + std::to_string(timeout_s) + " s");
  if (WIFSIGNALED(status))
    throw Error("simulation child crashed (signal " + std::to_string(WTERMSIG(status)) + ")" + why);
  if (data.empty()) throw Error("simulation child exited without a result" + why);
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
  r.activities = rd.u64();
  rd.get(&r.stopped_at_s, sizeof r.stopped_at_s);
  r.stop_cause = rd.str();
  return r;
}

}  // namespace dejavu::sim
