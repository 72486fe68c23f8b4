#include "master/http/model_upload.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <cstring>

#include "common/daemon/job_file.h"
#include "common/model/model.h"
#include "common/model/nir_dynamics.h"
#include "common/model/nir_import_process.h"
#include "master/http/multipart.h"

namespace snn {
namespace {

bool StartsAsHdf5(std::string_view bytes) {
  return bytes.substr(0, 8) == std::string_view("\x89HDF\r\n\x1a\n", 8);
}

// A printable file name for messages and the job's record.
std::string CleanName(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 128)) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '/') ? '_' : c;
  }
  return out.empty() ? "model" : out;
}

constexpr size_t kMaxJobPartBytes = 1 << 20;  // as a job file sent alone

// The job file with its model named as the upload's (the file may leave it out, and then says
// only how to read it: model_step_ms, model_reset). Refused when it names another model.
Result<std::string> NamingModel(std::string_view text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap() || !root["task"].IsMap() || !root["task"]["resources"].IsMap()) {
      return std::string(text);  // the job file's parser says what is wrong
    }
    YAML::Node r = root["task"]["resources"];
    if (r["model"]) {
      const std::string named = r["model"].IsScalar() ? r["model"].Scalar() : "";
      if (named != name && named.substr(named.find_last_of('/') + 1) != name) {
        return InvalidArgument("the job names model " + named.substr(0, 128) +
                               " but the upload's model is " + name);
      }
    }
    r["model"] = name;
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str());
  } catch (const YAML::Exception&) {
    return std::string(text);
  }
}

}  // namespace

Result<UploadedJob> ModelUpload::Read(const std::string& content_type,
                                      std::string_view body) const {
  auto parts = ParseMultipartForm(content_type, body);
  if (!parts.ok()) return parts.status();
  const FormPart* job = nullptr;
  const FormPart* model = nullptr;
  for (const auto& p : *parts) {
    if (p.name == "job") {
      job = &p;
    } else if (p.name == "model") {
      model = &p;
    } else {
      return InvalidArgument("unknown part '" + p.name.substr(0, 64) +
                             "' in the form upload (it takes 'job' and 'model')");
    }
  }
  if (job == nullptr || model == nullptr) {
    return InvalidArgument(
        "a form upload to POST /v1/jobs takes two parts: 'job' (the job file) and 'model' (a NIR "
        "or JSON model file)");
  }
  if (job->data.size() > kMaxJobPartBytes) {
    return InvalidArgument("the form upload's job is " + std::to_string(job->data.size()) +
                           " bytes; at most " + std::to_string(kMaxJobPartBytes));
  }
  const std::string name = CleanName(model->filename);
  auto text = NamingModel(job->data, name);
  if (!text.ok()) return text.status();
  UploadedJob out;
  auto spec = ParseJobYaml(*text, "job");
  if (!spec.ok()) return spec.status();
  out.spec = std::move(spec).value();
  auto* r = out.spec.mutable_task()->mutable_resources();
  auto read = ReadModel(model->data, name, *r, &out.note);
  if (!read.ok()) return read.status();
  out.model = std::move(read).value();
  return out;
}

Result<ImportedModel> ModelUpload::Import(const std::string& content_type,
                                          std::string_view body) const {
  auto parts = ParseMultipartForm(content_type, body);
  if (!parts.ok()) return parts.status();
  const FormPart* model = nullptr;
  v1::Resources how;  // the job file's words for how to read a NIR file
  for (const auto& p : *parts) {
    if (p.name == "model") {
      model = &p;
    } else if (p.name == "model_step_ms") {
      const std::string text(p.data.substr(0, 32));
      char* end = nullptr;
      const double step = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(step >= 0.001 && step <= 1000)) {
        return InvalidArgument("model_step_ms must be a step in ms from 0.001 to 1000 (e.g. 0.1)");
      }
      how.set_model_step_ms(step);
    } else if (p.name == "model_reset") {
      how.set_model_reset(std::string(p.data.substr(0, 32)));
      if (how.model_reset() != "subtract" && how.model_reset() != "zero") {
        return InvalidArgument("model_reset is subtract or zero, not '" + how.model_reset() + "'");
      }
    } else {
      return InvalidArgument("unknown part '" + p.name.substr(0, 64) +
                             "' in the form upload (it takes 'model', 'model_step_ms' and "
                             "'model_reset')");
    }
  }
  if (model == nullptr) {
    return InvalidArgument(
        "a form upload to POST /v1/models takes the part 'model' (a NIR or "
        "JSON model file)");
  }
  ImportedModel out;
  auto read = ReadModel(model->data, CleanName(model->filename), how, &out.note);
  if (!read.ok()) return read.status();
  out.model = std::move(read).value();
  return out;
}

Result<v1::Model> ModelUpload::ReadModel(std::string_view bytes, const std::string& name,
                                         const v1::Resources& how, std::string* note) const {
  // NIR as snnctl tells it (common/model/model.h's LooksLikeNir): by name or by content.
  const bool nir = name.size() > 4 && name.compare(name.size() - 4, 4, ".nir") == 0;
  if (nir || StartsAsHdf5(bytes)) return ReadNir(bytes, name, how, note);
  if (how.model_step_ms() > 0) {
    return InvalidArgument("model_step_ms is for NIR models; " + name +
                           " is not one (a JSON model gives its own timestep_ms)");
  }
  if (!how.model_reset().empty()) {
    return InvalidArgument("model_reset is for NIR models; " + name +
                           " is not one (a JSON model gives its own neurons' reset)");
  }
  auto json = ParseModelJson(std::string(bytes));
  if (!json.ok()) return Status(json.status().code(), name + ": " + json.status().message());
  return json;
}

Result<v1::Model> ModelUpload::ReadNir(std::string_view bytes, const std::string& name,
                                       const v1::Resources& resources, std::string* note) const {
  if (auto word = ParseNirReset(resources.model_reset()); !word.ok()) return word.status();
  if (config_.nir_import.empty()) {
    return FailedPrecondition(
        "this master cannot read NIR files: snn-nir-import (from the "
        "snnctl package) is not installed beside it");
  }
  // A private file (0600, in a folder of its own) the helper reads by its path, named as the
  // upload (the model is named after the file, as snnctl names it): HDF5 opens files by their
  // real path, so an unnamed or in-memory file will not do. Removed once read.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/snn-upload-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return Internal("cannot keep the upload: " + std::string(strerror(errno)));
  }
  const std::string path = dir + "/" + (name[0] == '.' ? "_" + name : name);
  struct Removed {
    std::string dir, path;
    ~Removed() {
      unlink(path.c_str());
      rmdir(dir.c_str());
    }
  } removed{dir, path};
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot keep the upload: " + std::string(strerror(errno)));
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      close(fd);
      return Internal("writing the upload: " + std::string(strerror(e)));
    }
    written += static_cast<size_t>(n);
  }
  close(fd);
  NirImportCall call;
  call.helper = config_.nir_import;
  call.path = path;
  call.name = name;
  call.step_ms = resources.model_step_ms();
  call.reset = resources.model_reset();
  call.max_cpu_s = config_.max_cpu_s;
  call.max_memory_bytes = config_.max_memory_bytes;
  auto imported = RunNirImport(call);
  if (!imported.ok()) return imported.status();
  if (resources.model_reset().empty() && !imported->note.empty()) {
    *note = imported->note.substr(0, imported->note.find('\n'));
  }
  return std::move(imported->model);
}

}  // namespace snn
