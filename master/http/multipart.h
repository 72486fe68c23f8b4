// multipart/form-data bodies (RFC 7578): what a browser's form or the Python client sends when a
// request carries a file. Parts are views into the body (no copies); a part's headers are read
// for its name, its file name and its type only. Refused with one line: no boundary, a body that
// does not follow it, more than `max_parts` parts, a part without a name, a name given twice.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct FormPart {
  std::string name;      // the form field's
  std::string filename;  // a file's name as sent (its last path component), "" for a field
  std::string content_type;
  std::string_view data;
};

// Whether a Content-Type names multipart/form-data.
bool IsMultipartForm(const std::string& content_type);

Result<std::vector<FormPart>> ParseMultipartForm(const std::string& content_type,
                                                 std::string_view body, size_t max_parts = 8);

}  // namespace snn
