// A name -> factory table for pluggable parts (engines, collective algorithms, pipeline
// schedules). Each folder fills its registries in one explicit register_builtins(); an
// unknown name is answered with the list of valid ones.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/error.h"

namespace dejavu {

template <class T>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  struct Entry {
    std::string description;
    Factory make;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(const std::string& name, std::string description, Factory make) {
    entries_[name] = Entry{std::move(description), std::move(make)};
  }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  std::unique_ptr<T> make(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) throw Error("unknown " + kind_ + " \"" + name + "\"; valid: " + names_joined());
    return it->second.make();
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, e] : entries_) out.push_back(name);
    return out;
  }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  std::string names_joined() const {
    std::string out;
    for (const auto& [name, e] : entries_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }

 private:
  std::string kind_;
  std::map<std::string, Entry> entries_;  // ordered: listings are deterministic
};

}  // namespace dejavu
