// JSON as dejavu writes it: text that is not valid UTF-8 (a file name from the command
// line, say) becomes U+FFFD instead of an exception halfway through an output file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dejavu {

template <typename Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dejavu
