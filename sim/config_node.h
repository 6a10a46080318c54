// A YAML node that knows its file, its position and its key path, so every complaint
// about it reads `file.yaml:14:7: links[3].bandwidth: expected ..., got ...`.
// Configs are parsed once at the edge with this; nothing deeper takes a file path.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/error.h"
#include "sim/units.h"

namespace dejavu {

class ConfigNode {
 public:
  // Parses a file; a missing file or a YAML syntax error is a ConfigError.
  static ConfigNode load_file(const std::string& path);
  static ConfigNode load_string(const std::string& text, const std::string& name);

  ConfigNode(YAML::Node node, std::string file, std::string path);

  const std::string& file() const { return file_; }
  std::string file_stem() const;                     // "gpt3-13b" for ".../gpt3-13b.yaml": the default name
  const std::string& path() const { return path_; }  // "links[3].bandwidth"
  SourceLoc loc() const;
  const YAML::Node& yaml() const { return node_; }

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  // Throws unless this is a mapping whose keys are all in `allowed`; the error for an
  // unknown key points at the key and lists the valid ones.
  void expect_map(std::initializer_list<const char*> allowed) const;
  void expect_map(const std::vector<std::string>& allowed) const;
  std::vector<ConfigNode> items() const;  // a sequence's elements; throws if not a list

  bool has(const std::string& key) const;
  ConfigNode child(const std::string& key) const;   // throws if missing
  SourceLoc key_loc(const std::string& key) const;  // where the key itself is written

  std::string as_string() const;
  bool as_bool() const;
  std::string as_choice(const std::vector<std::string>& choices) const;
  // Numbers are checked here, once, at the edge: whole where they must be, finite, and
  // within [min, max]; the error names the range (sim/limits.h holds the ceilings).
  long long as_int(long long min, long long max) const;
  double as_double(double min, double max) const;
  double as_quantity(units::Dimension dim, double min, double max) const;

  // Convenience readers for a key of this mapping. Without a fallback they throw when the
  // key is missing.
  std::string get_string(const std::string& key) const { return child(key).as_string(); }
  long long get_int(const std::string& key, long long min, long long max) const { return child(key).as_int(min, max); }
  double get_quantity(const std::string& key, units::Dimension d, double min, double max) const {
    return child(key).as_quantity(d, min, max);
  }
  long long get_int(const std::string& key, long long fallback, long long min, long long max) const;
  double get_double(const std::string& key, double fallback, double min, double max) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  double get_quantity(const std::string& key, units::Dimension d, double fallback, double min, double max) const;

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

// The text of an input file, checked first: a regular file (not a directory, device or
// FIFO), at most limits::kMaxInputBytes, without a UTF-8 byte-order mark. Throws a
// ConfigError naming the file.
std::string read_input_file(const std::string& path);

std::string join(const std::vector<std::string>& items, const std::string& sep);
// Text as a YAML scalar for a file dejavu writes: plain where it reads back as itself, else
// quoted (a model named "Llama 3.1 405B (proxy: 7 layers)").
std::string yaml_scalar(const std::string& text);
// One line of a simple CSV (no quoting) into its cells, each trimmed of spaces.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace dejavu
