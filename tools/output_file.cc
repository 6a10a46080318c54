#include "tools/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "sim/error.h"

namespace dejavu::tools {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& path, const std::string& problem) {
  throw ConfigError(SourceLoc{path, 0, 0}, "", problem + (option.empty() ? "" : " (" + option + ")"));
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Where a write to `path` lands: the path itself, or the file a symbolic link names.
std::string target_of(const std::string& option, const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops > 16) refuse(option, path, "a loop of symbolic links");
    const fs::path to = fs::read_symlink(p, ec);
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      refuse(option, path, std::string("is ") + kind_of(st.st_mode) + "; dejavu writes regular files");
    if (::access(p.c_str(), W_OK) != 0) refuse(option, path, std::string("cannot be written: ") + std::strerror(errno));
    return p.string();
  }
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (::stat(dir.c_str(), &st) != 0) refuse(option, path, "the folder " + dir.string() + " does not exist");
  if (!S_ISDIR(st.st_mode)) refuse(option, path, dir.string() + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0)
    refuse(option, path, "cannot write into " + dir.string() + ": " + std::strerror(errno));
  return p.string();
}

void write_all(const std::string& file, const std::string& bytes, const std::string& shown) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) refuse("", shown, std::string("cannot write the file: ") + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(file.c_str());
      refuse("", shown, std::string("writing the file failed: ") + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(file.c_str());
    refuse("", shown, std::string("writing the file failed: ") + std::strerror(err));
  }
}

}  // namespace

OutputSet::~OutputSet() {
  if (committed_) return;
  for (const File& f : files_)
    if (f.written) ::unlink(f.temporary.c_str());
}

void OutputSet::add(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  File f;
  f.option = option;
  f.path = path;
  f.target = target_of(option, path);
  for (const File& other : files_)
    if (other.target == f.target) refuse(option, path, "is also the output of " + other.option + "; each output once");
  f.temporary = f.target + ".partial";
  files_.push_back(std::move(f));
}

void OutputSet::add_folder(const std::string& option, const std::string& dir, const std::vector<std::string>& files) {
  if (dir.empty()) return;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      refuse(option, dir,
             S_ISREG(st.st_mode) ? "is a file; expected a folder"
                                 : std::string("is ") + kind_of(st.st_mode) + "; expected a folder");
    for (const std::string& name : files) add(option, (fs::path(dir) / name).string());
    return;
  }
  const fs::path parent = fs::path(dir).parent_path().empty() ? fs::path(".") : fs::path(dir).parent_path();
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    refuse(option, dir, "the folder " + parent.string() + " does not exist");
  if (::access(parent.c_str(), W_OK) != 0)
    refuse(option, dir, "cannot create it: " + std::string(std::strerror(errno)));
  // Nothing is created before commit: the files go into a temporary folder beside it.
  folders_.push_back(dir);
  for (const std::string& name : files) {
    File f;
    f.option = option;
    f.path = (fs::path(dir) / name).string();
    f.target = f.path;
    f.temporary = dir + ".partial-" + name;
    files_.push_back(std::move(f));
  }
}

OutputSet::File& OutputSet::find(const std::string& path) {
  for (File& f : files_)
    if (f.path == path) return f;
  throw Error("internal: " + path + " was not declared as an output");
}

void OutputSet::write(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  File& f = find(path);
  std::ostringstream text;
  fill(text);
  write_all(f.temporary, text.str(), f.path);
  f.written = true;
}

void OutputSet::commit() {
  for (const std::string& dir : folders_) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) refuse("", dir, "cannot create the folder: " + ec.message());
  }
  for (File& f : files_) {
    if (!f.written) continue;
    if (::rename(f.temporary.c_str(), f.target.c_str()) != 0)
      refuse(f.option, f.path, std::string("cannot write the file: ") + std::strerror(errno));
    f.written = false;
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  OutputSet out;
  out.add("", path);
  out.write(path, fill);
  out.commit();
}

}  // namespace dejavu::tools
