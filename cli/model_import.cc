#include "cli/model_import.h"

#include <iostream>

#include "common/model/model.h"
#include "common/model/nir_dynamics.h"
#include "common/model/nir_import_process.h"

namespace snn {
namespace {

Result<v1::Model> ImportNir(const std::string& path, double step_ms, const std::string& reset) {
  NirImportCall call;
  call.helper = NirImportBesideSelf();
  call.path = path;
  call.step_ms = step_ms;
  call.reset = reset;
  auto imported = RunNirImport(call);
  if (!imported.ok()) return imported.status();
  // Its note: which reset it assumed where the file is silent (unless the user chose one).
  if (reset.empty() && !imported->note.empty()) std::cerr << "snnctl: " << imported->note;
  return std::move(imported->model);
}

}  // namespace

Result<v1::Model> LoadModelOfJob(const std::string& path, double step_ms,
                                 const std::string& reset) {
  if (LooksLikeNir(path)) {
    if (auto word = ParseNirReset(reset); !word.ok()) return word.status();
    return ImportNir(path, step_ms, reset);
  }
  if (step_ms > 0) {
    return InvalidArgument("--dt is for NIR models; " + path + " gives its own timestep_ms");
  }
  if (!reset.empty()) {
    return InvalidArgument("--reset (model_reset) is for NIR models; " + path +
                           " gives its own neurons' reset");
  }
  return LoadModelFile(path);
}

}  // namespace snn
