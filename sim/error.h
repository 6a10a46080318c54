// The dejavu::Error family. Libraries throw these and never print or exit; the command
// line turns them into one line on stderr and exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace dejavu {

// Where in an input file something was found. Lines and columns count from 1; 0 means
// "unknown" (for example a value that was defaulted rather than written).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  std::string str() const;  // "file:line:col", or "file" when the position is unknown
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Bad user input: a config file, a trace, a command-line value. The message reads
// `file.yaml:14:7: links[3].bandwidth: expected a rate such as "400 Gbps", got "fast"`.
class ConfigError : public Error {
 public:
  ConfigError(const SourceLoc& where, const std::string& key, const std::string& problem);

  const SourceLoc& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  SourceLoc where_;
  std::string key_;
  std::string problem_;
};

// A model or plan that is well formed but cannot be simulated (a cyclic graph, a task
// whose route does not exist). Also reported with exit code 2.
class ModelError : public Error {
 public:
  explicit ModelError(const std::string& what) : Error(what) {}
};

}  // namespace dejavu
