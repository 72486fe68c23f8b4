#include "master/http/web_page.h"

namespace snn {

std::optional<HttpResponse> ServeWebPage(const std::string& path,
                                         const std::string& if_none_match) {
  std::string_view name;
  if (path == "/" || path == "/ui" || path == "/ui/") {
    name = "index.html";
  } else if (path.starts_with("/ui/")) {
    name = std::string_view(path).substr(4);
  } else {
    return std::nullopt;
  }
  for (const WebFile& file : WebFiles()) {
    if (file.name != name) continue;
    HttpResponse out;
    out.content_type = std::string(file.content_type);
    out.headers["ETag"] = std::string(file.etag);
    // Checked again at each load, so a new master's page is never stale.
    out.headers["Cache-Control"] = "no-cache";
    out.headers["X-Content-Type-Options"] = "nosniff";
    out.headers["Referrer-Policy"] = "no-referrer";
    // Only its own scripts and styles, talking only to this API; never framed (no clickjacking).
    out.headers["Content-Security-Policy"] =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    if (if_none_match == file.etag) {
      out.status = 304;
    } else {
      out.body = std::string(file.body);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace snn
