#include "master/jobs/usage_recorder.h"

#include "master/billing/usage_report.h"

namespace snn {

void UsageRecorder::Record(const v1::JobRecord& job, const v1::TaskRecord& task) {
  if (task.start_ms() == 0) return;  // never ran: nothing to bill
  v1::UsageRecord r = UsageOf(job, task, BoardTypeOf(task));
  window_.Add(r);
  if (billing_ == nullptr) return;
  if (billing_->Record(r, journal_) && changed_) changed_();
}

void UsageRecorder::Charge(const v1::UsageRecord& record) {
  window_.Add(record);
  if (billing_ == nullptr) return;
  if (billing_->Record(record, journal_) && changed_) changed_();
}

std::string UsageRecorder::BoardTypeOf(const v1::TaskRecord& task) const {
  if (const NodeEntry* node = nodes_.Find(task.node())) {
    for (const auto& b : node->record.boards()) {
      if (b.index() == task.board()) return b.type();
    }
  }
  return "";
}

}  // namespace snn
