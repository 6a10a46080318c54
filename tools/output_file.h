// Output files, all or nothing. A command names every file it will write before it does
// any work (`OutputSet::add` checks each path at once: its folder exists and takes files,
// it is not a directory, device or FIFO); then it writes them (`write`: each into a
// temporary beside its target), and `commit` renames them all into place. A failure at
// any point removes every temporary, so a failed run leaves no output file and touches no
// existing one. A symbolic link is written through: its target is replaced, the link kept.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace dejavu::tools {

class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();  // removes the temporaries of an uncommitted set

  // `option` names where the path came from (--json), for the error. Empty paths are skipped.
  void add(const std::string& option, const std::string& path);
  // A folder of files (--plot): created at commit if missing; `files` are its outputs.
  void add_folder(const std::string& option, const std::string& dir, const std::vector<std::string>& files);

  void write(const std::string& path, const std::function<void(std::ostream&)>& fill);
  void commit();

 private:
  struct File {
    std::string option, path, target, temporary;
    bool written = false;
  };
  File& find(const std::string& path);
  std::vector<File> files_;
  std::vector<std::string> folders_;  // to create at commit
  bool committed_ = false;
};

// One file, all or nothing (an OutputSet of one).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace dejavu::tools
