// A job submitted as a form upload (POST /v1/jobs, multipart/form-data): the job file (part
// "job", YAML or JSON, as snnctl submit reads it) and its model (part "model": a NIR file, or a
// JSON model), so that a client with nothing but HTTP (a notebook off the cluster, the web page)
// runs a network without snnctl, MUNGE or HDF5 on its host. The model is read as snnctl reads
// it, with the same one-line refusals: NIR by snn-nir-import in a child process under a CPU and
// memory limit (a damaged or hostile file costs the helper, never the master), JSON in process.
// The job's `model_step_ms` and `model_reset` apply; `resources.model` is the upload's file
// name (a job that names another model is refused). What the master assumed where the file is
// silent (the reset of layers without v_reset) comes back as a note. POST /v1/models reads a
// model alone the same way and answers it as JSON.
// Thread-safe; Read blocks (it runs the helper): call it on a worker, not the io thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/status.h"
#include "proto/job.pb.h"
#include "proto/model.pb.h"

namespace snn {

struct ModelUploadConfig {
  std::string nir_import;   // the snn-nir-import program ("" : NIR uploads are refused)
  uint64_t max_cpu_s = 60;  // the helper's, per file
  uint64_t max_memory_bytes = 2ull << 30;  // the helper's address space
};

struct ImportedModel {
  v1::Model model;
  std::string note;  // "" or one line
};

struct UploadedJob {
  v1::JobSpec spec;  // cores not set yet: they depend on the boards (common/model/model_fit.h)
  v1::Model model;
  std::string note;  // "" or one line
};

class ModelUpload {
 public:
  explicit ModelUpload(ModelUploadConfig config) : config_(std::move(config)) {}

  Result<UploadedJob> Read(const std::string& content_type, std::string_view body) const;
  // POST /v1/models: a model alone (part "model"; fields "model_step_ms", "model_reset"), read
  // the same way, for what takes a model as JSON (experiment services) or to see what a NIR
  // export becomes (as snn-nir-import prints it).
  Result<ImportedModel> Import(const std::string& content_type, std::string_view body) const;

 private:
  Result<v1::Model> ReadModel(std::string_view bytes, const std::string& name,
                              const v1::Resources& how, std::string* note) const;
  Result<v1::Model> ReadNir(std::string_view bytes, const std::string& name,
                            const v1::Resources& resources, std::string* note) const;

  const ModelUploadConfig config_;
};

}  // namespace snn
