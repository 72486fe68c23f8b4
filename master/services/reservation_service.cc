#include "master/services/reservation_service.h"

#include <glog/logging.h>

#include "common/base/utc_time.h"

namespace snn {

void ReservationService::Register(MethodRouter& router) {
  router.Add(
      rpc::kReservationCreate,
      [this](const CallContext& ctx, v1::ReservationCreateRequest req,
             Responder<v1::ReservationCreateResponse> r) { Create(ctx, std::move(req), r); });
  router.Add(rpc::kReservationList, [this](const CallContext&, v1::ReservationListRequest,
                                           Responder<v1::ReservationListResponse> r) {
    v1::ReservationListResponse resp;
    for (const auto& [name, reservation] : book_.all()) *resp.add_reservations() = reservation;
    resp.set_now_ms(clock_.NowMs());
    r.Ok(resp);
  });
  router.Add(rpc::kReservationDelete,
             [this](const CallContext& ctx, v1::ReservationDeleteRequest req,
                    Responder<v1::ReservationDeleteResponse> r) {
               if (Status s = book_.Delete(req.name()); !s.ok()) return r.Fail(s);
               LOG(INFO) << ctx.identity.Describe() << " deleted reservation " << req.name();
               journal_.Delete(kReservationKeyPrefix + req.name());
               next_boundary_ms_ = 0;
               request_schedule_();  // its boards are open again
               journal_.Commit([r] { r.Ok(v1::ReservationDeleteResponse()); });
             });
}

void ReservationService::Create(const CallContext& ctx, v1::ReservationCreateRequest req,
                                Responder<v1::ReservationCreateResponse> r) {
  v1::Reservation asked = std::move(*req.mutable_reservation());
  asked.set_created_by(ctx.identity.user);
  const int64_t now = clock_.NowMs();
  auto checked = book_.Check(std::move(asked), nodes_, jobs_.views().running(), now);
  if (!checked.ok()) return r.Fail(checked.status());
  LOG(INFO) << ctx.identity.Describe() << " created reservation " << checked->name() << " from "
            << FormatUtcTime(checked->start_ms()) << " for " << checked->duration_ms() / 1000
            << " s on " << checked->boards_size() << " board(s)"
            << (checked->daily() ? ", daily" : "");
  journal_.Put(kReservationKeyPrefix + checked->name(), checked->SerializeAsString());
  v1::ReservationCreateResponse resp;
  *resp.mutable_reservation() = *checked;
  book_.Add(std::move(*checked));
  next_boundary_ms_ = 0;
  request_schedule_();  // jobs that would run into it may no longer start
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void ReservationService::Tick() {
  const int64_t now = clock_.NowMs();
  const std::vector<std::string> over = book_.Expire(now);
  for (const std::string& name : over) {
    LOG(INFO) << "reservation " << name << " is over";
    journal_.Delete(kReservationKeyPrefix + name);
  }
  if (!over.empty()) journal_.Commit();  // one batch for all
  if (now < next_boundary_ms_) return;
  // An occurrence opened or closed (or the book changed): a pass starts its jobs, or others'.
  if (next_boundary_ms_ != 0) request_schedule_();
  next_boundary_ms_ = book_.NextBoundary(now);
}

}  // namespace snn
