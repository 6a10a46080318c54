#include "sim/process_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "sim/error.h"

namespace dejavu::sim {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int out = -1;  // the read end of its output pipe; -1 once closed
  int err = -1;  // a memory file holding its stderr
  Clock::time_point deadline;
  ChildOutcome outcome;
};

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

// Forks job i. The child's stderr goes to a file of its own: whatever SimGrid prints as
// it dies is read back as one line, never shown as it came.
Child start(size_t i, double timeout_s, const std::function<int(size_t, int)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("cannot create a pipe for a child process");
  Child c;
  c.index = i;
  c.err = ::memfd_create("dejavu-child-stderr", MFD_CLOEXEC);
  c.deadline = timeout_s > 0 ? Clock::now() +
                                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))
                             : Clock::time_point::max();
  std::fflush(nullptr);  // or the child would write the parent's buffered output again
  c.pid = ::fork();
  if (c.pid < 0) throw Error("cannot fork a child process");
  if (c.pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent killed (a sweep's timeout) takes it along
    if (::getppid() == 1) ::_exit(3);    // ... even one killed before the line above ran
    if (c.err >= 0) ::dup2(c.err, STDERR_FILENO);
    ::close(fds[0]);
    int code = 3;
    try {
      code = body(i, fds[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());  // the parent's stderr_tail names it
      std::fflush(stderr);
    } catch (...) {
    }
    ::close(fds[1]);
    ::_exit(code);  // no destructors, no atexit handlers of the parent's state
  }
  ::close(fds[1]);
  c.out = fds[0];
  return c;
}

// Reaps a child whose output has closed or whose time is up, and fills its outcome.
void finish(Child& c, bool timed_out) {
  if (timed_out) ::kill(c.pid, SIGKILL);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (c.out >= 0) ::close(c.out);
  c.outcome.timed_out = timed_out;
  if (WIFEXITED(status)) c.outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) c.outcome.signal = WTERMSIG(status);
  if (c.err >= 0) {
    c.outcome.stderr_tail = last_line(c.err);
    ::close(c.err);
  }
}

// Reads what is ready; true when the child closed its output (it has exited).
bool drain(Child& c) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(c.out, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      c.outcome.output.append(buf, static_cast<size_t>(n));
      return false;
    }
    return true;
  }
}

// Waits for output, an exit or a deadline; returns the children that ended, each with
// whether its time ran out.
std::vector<std::pair<size_t, bool>> wait_some(std::vector<Child>& running, bool ticking) {
  const auto now = Clock::now();
  std::vector<std::pair<size_t, bool>> ended;
  auto nearest = Clock::time_point::max();
  for (size_t k = 0; k < running.size(); ++k) {
    if (running[k].deadline <= now) ended.emplace_back(k, true);
    nearest = std::min(nearest, running[k].deadline);
  }
  if (!ended.empty()) return ended;
  int wait_ms = ticking ? 200 : -1;
  if (nearest != Clock::time_point::max()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(nearest - now).count() + 1;
    wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min<int>(wait_ms, static_cast<int>(left));
  }
  std::vector<pollfd> fds;
  for (const Child& c : running) fds.push_back({c.out, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return ended;  // EINTR or time: look again
  for (size_t k = 0; k < running.size(); ++k)
    if (fds[k].revents != 0 && drain(running[k])) ended.emplace_back(k, false);
  return ended;
}

}  // namespace

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void run_children(size_t jobs, const PoolOptions& o, const std::function<int(size_t, int)>& body,
                  const std::function<void(size_t, ChildOutcome)>& done) {
  std::vector<Child> running;
  size_t next = 0;
  try {
    while (next < jobs || !running.empty()) {
      while (next < jobs && static_cast<int>(running.size()) < std::max(1, o.workers))
        running.push_back(start(next++, o.timeout_s, body));
      const auto ended = wait_some(running, static_cast<bool>(o.tick));
      for (size_t e = ended.size(); e-- > 0;) {  // from the back: erasing keeps earlier indices
        Child c = std::move(running[ended[e].first]);
        running.erase(running.begin() + static_cast<long>(ended[e].first));
        finish(c, ended[e].second);
        done(c.index, std::move(c.outcome));
      }
      if (o.tick) o.tick(running.size());
    }
  } catch (...) {
    for (Child& c : running) finish(c, true);  // no child outlives a caller's error
    throw;
  }
}

}  // namespace dejavu::sim
