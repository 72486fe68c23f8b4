// The web page (web/ in the source: docs/user-guide.md, "In a browser"): the queue, a job with its
// history, placement, output and usage, the pool, and a form to submit, updated live from the
// event stream. Its files are compiled into the master (cmake/embed_files.cmake) and served by
// the HTTP API without a token: they hold no data; the page reads everything through /v1/ with
// the token its user gives it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "master/http/http_server.h"

namespace snn {

struct WebFile {
  std::string_view name;  // "app.js"
  std::string_view content_type;
  std::string_view etag;  // quoted: a digest of the body
  std::string_view body;
};

// The page's files (generated from web/).
std::span<const WebFile> WebFiles();

// The answer to GET `path` when it is the page ("/", "/ui/", "/ui/index.html") or one of its files
// ("/ui/app.js"): 200 with the file, or 304 when `if_none_match` names it. nullopt for any other
// path.
std::optional<HttpResponse> ServeWebPage(const std::string& path, const std::string& if_none_match);

}  // namespace snn
