// An in-process master with one node of two boards (32 one-core slots) for the job array tests:
// submitting arrays of alice's, finding their elements, ending them.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/base/array_spec.h"
#include "tests/master/in_process_master.h"

namespace snn {

class ArrayMaster : public InProcessMaster {
 protected:
  void SetUp() override { AddNode("n1", 2, "sim-v1", 4, 100, false, /*streams=*/64); }

  // A one-core batch job "sweep" of alice's; an array of `indices` (none: not an array).
  static v1::JobSpec SweepSpec(const std::string& indices) {
    v1::JobSpec spec;
    spec.set_name("sweep");
    spec.set_min_replicas(1);
    spec.mutable_task()->set_command("/bin/true");
    auto* r = spec.mutable_task()->mutable_resources();
    r->set_cores(1);
    r->set_ksps(10);
    r->set_streams(1);
    if (!indices.empty()) *spec.mutable_array() = *ParseArraySpec(indices);
    return spec;
  }
  Result<const v1::JobRecord*> TrySubmit(const v1::JobSpec& spec) {
    auto job = components_.lifecycle.Submit(spec, "alice");
    journal_.Commit();
    return job;
  }
  Result<const v1::JobRecord*> TrySubmitArray(const std::string& indices) {
    return TrySubmit(SweepSpec(indices));
  }
  const v1::JobRecord& SubmitArray(const std::string& indices) {
    auto job = TrySubmitArray(indices);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return **job;
  }
  // The array's elements not ended, and those running.
  std::vector<v1::JobRecord*> Unfinished(uint64_t array) {
    std::vector<v1::JobRecord*> out;
    for (const auto& [id, job] : jobs_.jobs()) {
      if (job.array_parent() == array && !IsTerminal(job.state())) out.push_back(jobs_.Find(id));
    }
    return out;
  }
  // The job, live or archived (an ended job leaves memory once its move is durable).
  v1::JobRecord Get(uint64_t id) {
    if (const v1::JobRecord* live = jobs_.Find(id)) return *live;
    auto archived = archive_.Find(id);
    EXPECT_TRUE(archived.ok() && archived->has_value()) << id;
    return archived.ok() && archived->has_value() ? **archived : v1::JobRecord();
  }
  void End(v1::JobRecord& element, int exit_code) {
    v1::TaskStatus s;
    s.set_job_id(element.id());
    s.set_index(0);
    s.set_attempt(element.attempt());
    s.set_state(v1::TASK_EXITED);
    s.set_exit_code(exit_code);
    components_.lifecycle.ApplyTaskStatus("n1", s);
    journal_.Commit();
  }
};

}  // namespace snn
