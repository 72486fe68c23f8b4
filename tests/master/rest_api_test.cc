// The HTTP API's pieces without sockets: addresses decoded, routes matched, requests built from
// the body, the path and the query (every mistake one line), every route bound to a method the
// master serves with the same right, the OpenAPI document well-formed, tokens checked on the
// clock.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "common/base/clock.h"
#include "common/identity/pki.h"
#include "master/http/event_hub.h"
#include "master/http/openapi.h"
#include "master/http/rest_request.h"
#include "master/http/web_page.h"
#include "master/master_server.h"
#include "master/services/token_service.h"
#include "master/store/memory_store.h"

namespace snn {
namespace {

Result<std::unique_ptr<google::protobuf::Message>> Build(const std::string& verb,
                                                         const std::string& target,
                                                         const std::string& body = "") {
  auto t = ParseTarget(target);
  if (!t.ok()) return t.status();
  auto match = MatchRoute(verb, t->path);
  if (!match.ok()) return match.status();
  return BuildRequest(*match, *t, body);
}

TEST(RestRequestTest, PathAndQueryFillTheRequest) {
  auto show = Build("GET", "/v1/jobs/42?tenant=lab%2Da");
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  const auto& s = static_cast<const v1::ShowJobRequest&>(**show);
  EXPECT_EQ(s.job().tenant_job_id(), 42u);
  EXPECT_EQ(s.job().tenant(), "lab-a");

  auto list = Build("GET", "/v1/jobs?states=running,PENDING&limit=5&all_tenants=true&user=a+b");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  const auto& l = static_cast<const v1::ListJobsRequest&>(**list);
  ASSERT_EQ(l.states_size(), 2);
  EXPECT_EQ(l.states(0), v1::RUNNING);
  EXPECT_EQ(l.states(1), v1::PENDING);
  EXPECT_EQ(l.limit(), 5u);
  EXPECT_TRUE(l.all_tenants());
  EXPECT_EQ(l.user(), "a b");

  auto release = Build("POST", "/v1/jobs/3/release");
  ASSERT_TRUE(release.ok());
  EXPECT_TRUE(static_cast<const v1::HoldRequest&>(**release).release());
  auto hold = Build("POST", "/v1/jobs/3/hold");
  ASSERT_TRUE(hold.ok());
  EXPECT_FALSE(static_cast<const v1::HoldRequest&>(**hold).release());

  auto members = Build("POST", "/v1/tenants/lab-a/members", R"({"add_users": ["sys"]})");
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  const auto& m = static_cast<const v1::TenantMembersRequest&>(**members);
  EXPECT_EQ(m.tenant(), "lab-a");
  ASSERT_EQ(m.add_users_size(), 1);
}

TEST(RestRequestTest, TheJobDocumentIsTheJobFile) {
  auto submit = Build("POST", "/v1/jobs",
                      "name: a\ntask:\n  command: /bin/true\n  resources: {cores: 2, ksps: 5}\n");
  ASSERT_TRUE(submit.ok()) << submit.status().ToString();
  const auto& spec = static_cast<const v1::SubmitRequest&>(**submit).spec();
  EXPECT_EQ(spec.name(), "a");
  EXPECT_EQ(spec.task().resources().cores(), 2u);
  // JSON is YAML too.
  auto json = Build("POST", "/v1/jobs",
                    R"({"name": "b", "task": {"command": "/bin/true",
                        "resources": {"cores": 1, "ksps": 5}}})");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  // A model file lives on the user's machine: refused, saying what to do.
  auto model = Build("POST", "/v1/jobs",
                     "task:\n  command: /bin/true\n  resources: {model: net.json, ksps: 5}\n");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("submit with snnctl"), std::string::npos);
}

TEST(RestRequestTest, EveryMistakeIsOneLineNamingWhatIsAccepted) {
  struct Case {
    std::string verb, target, body, says;
  };
  const std::vector<Case> cases = {
      {"GET", "/v1/jobs/x", "", "the id must be a whole number"},
      {"GET", "/v1/jobs/-1", "", "the id must be a whole number"},
      {"GET", "/v1/jobs/99999999999999999999", "", "the id must be a whole number"},
      {"GET", "/v1/jobs?colour=red", "", "unknown parameter 'colour'"},
      {"GET", "/v1/jobs?states=LATE", "", "must be one of"},
      {"GET", "/v1/jobs?all_tenants=yes", "", "must be true or false"},
      {"GET", "/v1/jobs/1?tenant=a", "{}", "takes no body"},
      {"GET", "/v1/jobs/%zz", "", "two hex digits"},
      {"GET", "/v1/jobz", "", "no resource /v1/jobz"},
      {"DELETE", "/v1/jobs", "", "DELETE is not allowed on /v1/jobs (it takes POST, GET)"},
      {"POST", "/v1/credits", "{\"tenant\": 5, ", "the body is not a CreditRequest in JSON"},
      {"POST", "/v1/credits", "{\"cash\": 5}", "the body is not a CreditRequest in JSON"},
      {"POST", "/v1/jobs", "", "the body must be a job file"},
      {"POST", "/v1/jobs", "name: [", "not valid YAML"},
  };
  for (const auto& c : cases) {
    auto r = Build(c.verb, c.target, c.body);
    ASSERT_FALSE(r.ok()) << c.target;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << c.target << ": " << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos)
        << c.target << ": " << r.status().message();
  }
}

TEST(RestRoutesTest, EveryRouteIsAMethodTheMasterServesWithItsRight) {
  MasterConfig config;
  config.auth = "none";
  ManualClock clock;
  MasterServer master(config, clock, std::make_unique<MemoryStore>());
  const auto methods = master.router().Methods();
  std::set<std::string> seen;
  for (const auto& route : RestRoutes()) {
    auto it = methods.find(route.method);
    ASSERT_NE(it, methods.end()) << route.path;
    EXPECT_EQ(it->second, route.right) << route.path;
    EXPECT_TRUE(seen.insert(route.verb + " " + route.path).second) << "twice: " << route.path;
    // Every parameter names a field of the request.
    for (const auto& p : route.params) {
      google::protobuf::Message* prototype =
          google::protobuf::MessageFactory::generated_factory()->GetPrototype(route.request)->New();
      EXPECT_TRUE(SetFieldFromText(*prototype, p.field, "1", p.name).ok()) << route.path;
      delete prototype;
    }
  }
  // Every method a user, an operator or an admin calls with snnctl has a route; nodes' and
  // masters' do not.
  std::set<std::string> routed;
  for (const auto& route : RestRoutes()) routed.insert(route.method);
  for (const auto& [method, right] : methods) {
    const bool peer = right == Right::kNode || right == Right::kMaster || right == Right::kEnrol;
    EXPECT_EQ(routed.count(method) == 1, !peer) << method;
  }
}

TEST(OpenApiTest, TheDocumentIsJsonWithEveryRouteAndSchema) {
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(OpenApiDocument(), &doc).ok());
  EXPECT_EQ(doc.fields().at("openapi").string_value(), "3.1.0");
  const auto& paths = doc.fields().at("paths").struct_value().fields();
  const auto& schemas =
      doc.fields().at("components").struct_value().fields().at("schemas").struct_value().fields();
  for (const auto& route : RestRoutes()) {
    ASSERT_TRUE(paths.count(route.path)) << route.path;
    EXPECT_TRUE(schemas.count(route.response->full_name())) << route.response->full_name();
  }
  // Every $ref points at a schema that is there.
  const std::string& text = OpenApiDocument();
  for (size_t at = text.find("#/components/schemas/"); at != std::string::npos;
       at = text.find("#/components/schemas/", at + 1)) {
    const size_t start = at + 21;
    const std::string name = text.substr(start, text.find('"', start) - start);
    EXPECT_TRUE(schemas.count(name)) << name;
  }
}

TEST(WebPageTest, ThePageAndItsFilesAreServedWithTheirTypesAndNothingElse) {
  auto index = ServeWebPage("/", "");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("/ui/app.js"), std::string::npos);
  // Scripts only from the master itself, never framed.
  EXPECT_NE(index->headers["Content-Security-Policy"].find("script-src 'self'"), std::string::npos);
  EXPECT_NE(index->headers["Content-Security-Policy"].find("frame-ancestors 'none'"),
            std::string::npos);
  EXPECT_EQ(ServeWebPage("/ui/", "")->body, index->body);
  // Every file the page loads is there, with its type; a second load is a 304.
  for (const std::string name : {"app.js", "api.js", "dom.js", "queue.js", "job.js", "placement.js",
                                 "pool.js", "submit.js", "style.css", "icon.svg"}) {
    auto file = ServeWebPage("/ui/" + name, "");
    ASSERT_TRUE(file.has_value()) << name;
    EXPECT_FALSE(file->body.empty()) << name;
    auto again = ServeWebPage("/ui/" + name, file->headers["ETag"]);
    EXPECT_EQ(again->status, 304) << name;
    EXPECT_TRUE(again->body.empty()) << name;
  }
  EXPECT_EQ(ServeWebPage("/ui/app.js", "")->content_type, "text/javascript; charset=utf-8");
  // Every module a script imports is served.
  for (const WebFile& file : WebFiles()) {
    std::string_view body = file.body;
    for (size_t at = body.find("from './"); at != std::string_view::npos;
         at = body.find("from './", at + 1)) {
      const size_t end = body.find('\'', at + 8);
      const std::string imported(body.substr(at + 8, end - at - 8));
      EXPECT_TRUE(ServeWebPage("/ui/" + imported, "").has_value())
          << file.name << " imports " << imported;
    }
  }
  EXPECT_FALSE(ServeWebPage("/ui/missing.js", "").has_value());
  EXPECT_FALSE(ServeWebPage("/ui/../etc/passwd", "").has_value());
  EXPECT_FALSE(ServeWebPage("/v1/jobs", "").has_value());
}

TEST(TokenServiceTest, ATokenActsUntilItExpiresAndOnlyTheHashIsKept) {
  MemoryStore store;
  Journal journal(store, [](std::function<void()> fn) { fn(); });
  ManualClock clock;
  clock.SetMs(1000000);
  TokenService tokens(journal, clock);
  const std::string token = "snntok.secret";
  v1::AccessTokenRecord record;
  record.set_id("abc");
  record.set_uid(1000);
  record.set_expires_ms(clock.NowMs() + 60000);
  tokens.Restore(pki::Sha256Hex(token), record);
  EXPECT_TRUE(tokens.Check(token).ok());
  EXPECT_EQ(tokens.Check("snntok.other").status().code(), Code::kUnauthenticated);
  clock.AdvanceMs(59999);
  EXPECT_TRUE(tokens.Check(token).ok());
  clock.AdvanceMs(1);
  auto expired = tokens.Check(token);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.status().code(), Code::kUnauthenticated);
  EXPECT_NE(expired.status().message().find("has expired"), std::string::npos);
}

// An event stream that keeps what it is sent, and can stop reading.
class FakeStream : public HttpStream {
 public:
  void Send(std::string chunk) override {
    text += chunk;
    if (!reading) backlog += chunk.size();
  }
  bool closed() const override { return is_closed; }
  void set_on_close(std::function<void()>) override {}
  size_t backlog_bytes() const override { return backlog; }
  void Close() override { is_closed = true; }
  void End() override { is_closed = true; }
  std::string text;
  bool reading = true;
  size_t backlog = 0;
  bool is_closed = false;
};

v1::JobRecord JobIn(const std::string& tenant, uint64_t id, v1::JobState state) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_tenant(tenant);
  job.set_tenant_job_id(id);
  job.set_state(state);
  return job;
}

// One user's streams are bounded (one user held 1,024 open, from every address, and none ever
// ended), and a stream ends when the token that opened it expires.
TEST(EventHubTest, OneUsersStreamsAreBoundedAndEndWithTheirToken) {
  ManualClock clock;
  clock.SetMs(5000);
  EventHubOptions options;
  options.max_streams_per_owner = 2;
  EventHub hub(clock, options);
  auto a = std::make_shared<FakeStream>(), b = std::make_shared<FakeStream>(),
       c = std::make_shared<FakeStream>(), other = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(a, 0, nullptr, "uid 1", 9000).ok());
  ASSERT_TRUE(hub.Watch(b, 0, nullptr, "uid 1").ok());
  Status third = hub.Watch(c, 0, nullptr, "uid 1");
  EXPECT_EQ(third.code(), Code::kResourceExhausted);
  EXPECT_NE(third.message().find("2 event streams of uid 1 are open"), std::string::npos);
  EXPECT_TRUE(hub.Watch(other, 0, nullptr, "uid 2").ok());  // another user is not affected
  clock.SetMs(9000);
  hub.Tick();
  EXPECT_TRUE(a->is_closed);
  EXPECT_NE(a->text.find("the token of this stream has expired"), std::string::npos);
  EXPECT_FALSE(b->is_closed);
  EXPECT_TRUE(hub.Watch(c, 0, nullptr, "uid 1").ok());  // its place is free again
}

TEST(EventHubTest, FansOutFilteredEventsInOrderAndResumes) {
  ManualClock clock;
  clock.SetMs(5000);
  EventHubOptions options;
  options.keep = 3;
  EventHub hub(clock, options);
  auto a = std::make_shared<FakeStream>(), b = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(a, 0, nullptr).ok());
  ASSERT_TRUE(hub.Watch(b, 0, [](const v1::Event& e) { return e.job().tenant() == "b"; }).ok());
  // A job's event only when what watchers see changes.
  auto first = hub.JobChanged(JobIn("a", 1, v1::PENDING));
  ASSERT_TRUE(first.has_value());
  hub.Publish(*first);
  EXPECT_FALSE(hub.JobChanged(JobIn("a", 1, v1::PENDING)).has_value());
  hub.Publish(*hub.JobChanged(JobIn("a", 1, v1::RUNNING)));
  hub.Publish(*hub.JobChanged(JobIn("b", 2, v1::PENDING)));
  hub.Publish(*hub.JobChanged(JobIn("a", 1, v1::COMPLETED)));
  const uint64_t r1 = 5000 * 1000 + 1;  // the first revision: above any earlier master's
  EXPECT_NE(a->text.find("id: " + std::to_string(r1) + "\nevent: job\n"), std::string::npos);
  EXPECT_LT(a->text.find("\"state\":\"PENDING\""), a->text.find("\"state\":\"RUNNING\""));
  EXPECT_EQ(b->text.find("\"tenant\":\"a\""), std::string::npos) << b->text;
  EXPECT_NE(b->text.find("\"tenant\":\"b\""), std::string::npos);
  // Resuming replays what came after; from before what is kept (3 events): a reset.
  auto c = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(c, r1 + 2, nullptr).ok());
  EXPECT_EQ(c->text.find("PENDING"), std::string::npos);
  EXPECT_NE(c->text.find("COMPLETED"), std::string::npos);
  EXPECT_EQ(c->text.find("RUNNING"), std::string::npos);
  auto d = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(d, r1 - 1, nullptr).ok());  // r1 is no longer kept
  EXPECT_NE(d->text.find("event: reset"), std::string::npos);
  auto e = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(e, 12345, nullptr).ok());  // not a revision this master gave
  EXPECT_NE(e->text.find("event: reset"), std::string::npos);
  // A stream that stops reading is closed once it is 1 MiB behind; the others go on.
  a->reading = false;
  a->backlog = (1 << 20) + 1;
  hub.Publish(*hub.JobChanged(JobIn("b", 2, v1::RUNNING)));
  EXPECT_TRUE(a->closed());
  EXPECT_NE(b->text.find("RUNNING"), std::string::npos);
  // Quiet streams get a keepalive comment; closed ones are dropped at the tick.
  clock.AdvanceMs(15000);
  hub.Tick();
  EXPECT_NE(b->text.find(": keepalive"), std::string::npos);
  EXPECT_EQ(hub.streams(), 4u);
}

TEST(EventHubTest, EventsPublishedWithNoWatcherAreFormattedWhenAWatcherResumes) {
  ManualClock clock;
  clock.SetMs(7000);
  EventHub hub(clock);
  hub.Publish(*hub.JobChanged(JobIn("a", 1, v1::PENDING)));
  hub.Publish(*hub.JobChanged(JobIn("a", 1, v1::RUNNING)));
  hub.Publish(*hub.JobChanged(JobIn("b", 2, v1::PENDING)));
  const uint64_t r1 = 7000 * 1000 + 1;
  auto b = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(b, r1, [](const v1::Event& e) { return e.job().tenant() == "b"; }).ok());
  EXPECT_EQ(b->text.find("\"tenant\":\"a\""), std::string::npos) << b->text;
  EXPECT_NE(b->text.find("id: " + std::to_string(r1 + 2) + "\nevent: job\n"), std::string::npos)
      << b->text;
  auto all = std::make_shared<FakeStream>();
  ASSERT_TRUE(hub.Watch(all, r1, nullptr).ok());
  const size_t running = all->text.find("id: " + std::to_string(r1 + 1) + "\nevent: job\ndata: ");
  ASSERT_NE(running, std::string::npos) << all->text;
  EXPECT_LT(running, all->text.find("\"state\":\"RUNNING\""));
  EXPECT_LT(all->text.find("\"state\":\"RUNNING\""), all->text.find("\"tenant\":\"b\""));
  EXPECT_EQ(all->text.find("id: " + std::to_string(r1) + "\n"), std::string::npos) << all->text;
}

TEST(EventHubTest, ALongPollWakesAtTheJobsWriteOrItsDeadline) {
  ManualClock clock;
  EventHub hub(clock);
  int woken = 0;
  ASSERT_TRUE(hub.WaitForJob(7, clock.NowMs() + 1000, [&] { ++woken; }).ok());
  ASSERT_TRUE(hub.WaitForJob(8, clock.NowMs() + 1000, [&] { woken += 10; }).ok());
  hub.JobWritten(7);
  EXPECT_EQ(woken, 1);
  hub.JobWritten(7);  // once
  EXPECT_EQ(woken, 1);
  clock.AdvanceMs(999);
  hub.Tick();
  EXPECT_EQ(woken, 1);
  clock.AdvanceMs(1);
  hub.Tick();
  EXPECT_EQ(woken, 11);
  EXPECT_EQ(hub.waits(), 0u);
}

}  // namespace
}  // namespace snn
