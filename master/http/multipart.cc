#include "master/http/multipart.h"

#include <algorithm>
#include <cctype>

namespace snn {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The value of `key=` among a header's parameters ("; name=\"x\""), "" if absent.
std::string Parameter(std::string_view header, const std::string& key) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    std::string_view rest = Trim(header.substr(at + 1));
    ++at;
    const size_t eq = rest.find('=');
    if (eq == std::string_view::npos || Lower(Trim(rest.substr(0, eq))) != key) continue;
    std::string_view value = Trim(rest.substr(eq + 1));
    if (!value.empty() && value.front() == '"') {
      std::string out;
      for (size_t i = 1; i < value.size() && value[i] != '"'; ++i) {
        if (value[i] == '\\' && i + 1 < value.size()) ++i;
        out += value[i];
      }
      return out;
    }
    return std::string(value.substr(0, value.find(';')));
  }
  return "";
}

}  // namespace

bool IsMultipartForm(const std::string& content_type) {
  return Lower(Trim(std::string_view(content_type).substr(0, content_type.find(';')))) ==
         "multipart/form-data";
}

Result<std::vector<FormPart>> ParseMultipartForm(const std::string& content_type,
                                                 std::string_view body, size_t max_parts) {
  const std::string boundary = Parameter(content_type, "boundary");
  if (!IsMultipartForm(content_type) || boundary.empty() || boundary.size() > 70) {
    return InvalidArgument("a form upload needs Content-Type: multipart/form-data; boundary=...");
  }
  const std::string delimiter = "--" + boundary;
  auto bad = [] {
    return InvalidArgument("the form upload does not follow its boundary (multipart/form-data)");
  };
  if (body.substr(0, delimiter.size()) != delimiter) return bad();
  size_t at = delimiter.size();
  std::vector<FormPart> parts;
  for (;;) {
    if (body.substr(at, 2) == "--") break;  // the closing delimiter
    if (body.substr(at, 2) != "\r\n") return bad();
    at += 2;
    const size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return bad();
    FormPart part;
    std::string disposition;
    for (size_t line = at; line < head_end;) {
      size_t eol = body.find("\r\n", line);
      if (eol == std::string_view::npos || eol > head_end) eol = head_end;
      const std::string_view header = body.substr(line, eol - line);
      const size_t colon = header.find(':');
      if (colon != std::string_view::npos) {
        const std::string name = Lower(Trim(header.substr(0, colon)));
        const std::string_view value = Trim(header.substr(colon + 1));
        if (name == "content-disposition") disposition = std::string(value);
        if (name == "content-type") part.content_type = std::string(value);
      }
      line = eol + 2;
    }
    part.name = Parameter(disposition, "name");
    part.filename = Parameter(disposition, "filename");
    if (const size_t slash = part.filename.find_last_of("/\\"); slash != std::string::npos) {
      part.filename = part.filename.substr(slash + 1);
    }
    const size_t data_start = head_end + 4;
    const size_t next = body.find("\r\n" + delimiter, data_start);
    if (next == std::string_view::npos) return bad();
    part.data = body.substr(data_start, next - data_start);
    at = next + 2 + delimiter.size();
    if (part.name.empty()) return InvalidArgument("a part of the form upload has no name");
    if (std::any_of(parts.begin(), parts.end(),
                    [&](const FormPart& p) { return p.name == part.name; })) {
      return InvalidArgument("the form upload gives '" + part.name.substr(0, 64) + "' twice");
    }
    if (parts.size() == max_parts) {
      return InvalidArgument("the form upload has more than " + std::to_string(max_parts) +
                             " parts");
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace snn
