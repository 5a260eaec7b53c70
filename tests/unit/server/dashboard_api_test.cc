// The dashboard and its JSON API, served by a real CoordinatorServer on
// loopback over a real SQLite file: pages, routes, errors, tokens, and that
// an API answer is the gRPC answer.
#include "server/dashboard_api.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/auth.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/coordinator_server.h"
#include "tests/support/temp_file.h"

namespace paradnn::server {
namespace {

namespace http = boost::beast::http;

struct Answer {
  int status = 0;
  std::string content_type;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

using Headers = std::vector<std::pair<http::field, std::string>>;

// One HTTP request to 127.0.0.1:port, with Host 127.0.0.1 and, for a POST,
// Content-Type application/json unless `headers` say otherwise.
Answer Fetch(int port, http::verb method, const std::string& target, const std::string& body = "",
             const std::string& authorization = "", const Headers& headers = {}) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                static_cast<unsigned short>(port)));
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
  if (method == http::verb::post) request.set(http::field::content_type, "application/json");
  for (const auto& [field, value] : headers) request.set(field, value);
  request.body() = body;
  request.prepare_payload();
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser);
  const auto& response = parser.get();
  return {static_cast<int>(response.result_int()), std::string(response[http::field::content_type]),
          response.body()};
}

int PortOf(const std::string& host_port) {
  return std::stoi(host_port.substr(host_port.rfind(':') + 1));
}

class DashboardApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    options_.db_path = dir_.File("dashboard.db");
    options_.listen = "127.0.0.1:0";
    options_.metrics_listen = "127.0.0.1:0";
  }
  void TearDown() override { server_.reset(); }

  void Start() {
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> started = CoordinatorServer::Start(options_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    port_ = PortOf(server_->metrics_address());
  }

  std::string WriteTokenFile(const std::string& name, const std::string& token) {
    std::string path = dir_.File(name);
    std::ofstream(path) << token << "\n";
    EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
    return path;
  }

  std::unique_ptr<v1::Coordinator::Stub> Stub() const {
    return v1::Coordinator::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  ::paradnn::testing::TempFolder dir_{"dashboard-api"};
  CoordinatorServerOptions options_;
  std::unique_ptr<CoordinatorServer> server_;
  int port_ = 0;
};

TEST_F(DashboardApiTest, ServesThePageAndTheBundledLibraries) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const Answer page = Fetch(port_, http::verb::get, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/assets/vega-embed.min.js"), std::string::npos);
  // Every asset the page names is served (a file added to the page but not
  // to the embedded list fails here), and at least these.
  std::set<std::string> named;
  static const std::regex kAssetRef(R"re((?:src|href)="/assets/([^"]+)")re");
  for (std::sregex_iterator it(page.body.begin(), page.body.end(), kAssetRef), end; it != end;
       ++it) {
    named.insert((*it)[1].str());
  }
  for (const char* asset :
       {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "app.js", "analysis.js",
        "charts.js", "fleet_report.js", "result_fields.js", "style.css"}) {
    EXPECT_EQ(named.count(asset), 1u) << "the page does not load " << asset;
  }
  for (const std::string& asset : named) {
    const Answer a = Fetch(port_, http::verb::get, "/assets/" + asset);
    EXPECT_EQ(a.status, 200) << asset;
    EXPECT_GT(a.body.size(), 1000u) << asset;
  }
  // The bundled Vega, not a placeholder: its UMD build names itself.
  EXPECT_NE(Fetch(port_, http::verb::get, "/assets/vega.min.js").body.find("vega"),
            std::string::npos);
  EXPECT_EQ(Fetch(port_, http::verb::get, "/assets/nope.js").status, 404);
  EXPECT_EQ(Fetch(port_, http::verb::post, "/").status, 405);
  // The built-in pages are still there.
  EXPECT_EQ(Fetch(port_, http::verb::get, "/healthz").body, "ok\n");
}

TEST_F(DashboardApiTest, RoutesAnswerWhatGrpcAnswers) {
  ASSERT_NO_FATAL_FAILURE(Start());
  v1::SubmitSweepRequest submit;
  v1::SweepSpec* spec = submit.mutable_spec();
  spec->set_name("api");
  spec->set_family("fc");
  spec->set_device("cpu");
  for (const auto& [key, value] : std::map<std::string, int64_t>{
           {"layer", 2}, {"node", 64}, {"input", 100}, {"output", 10}, {"batch", 8}}) {
    (*spec->mutable_params())[key].set_value(value);
  }
  v1::SubmitSweepResponse submitted;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(Stub()->SubmitSweep(&context, submit, &submitted).ok());
  }
  const std::string id = std::to_string(submitted.sweep_id());
  v1::SweepStatus expected;
  {
    grpc::ClientContext context;
    v1::GetSweepRequest get;
    get.set_sweep_id(submitted.sweep_id());
    ASSERT_TRUE(Stub()->GetSweep(&context, get, &expected).ok());
  }
  const Answer sweep = Fetch(port_, http::verb::get, "/api/v1/sweeps/" + id);
  ASSERT_EQ(sweep.status, 200) << sweep.body;
  EXPECT_EQ(sweep.content_type, "application/json; charset=utf-8");
  v1::SweepStatus parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(sweep.body, &parsed).ok());
  // elapsed_seconds moves on between the two calls.
  parsed.set_elapsed_seconds(expected.elapsed_seconds());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, expected))
      << sweep.body << "\n"
      << expected.DebugString();
  // Every field is present, zeros too, under the proto's names.
  EXPECT_EQ(sweep.json()["failed_jobs"], "0");
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/sweeps").json()["sweeps"].size(), 1u);
  const nlohmann::json rows =
      Fetch(port_, http::verb::get, "/api/v1/sweeps/" + id + "/results").json()["rows"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["config"]["params"]["node"], "64");
  EXPECT_EQ(rows[0]["state"], "JOB_PENDING");
  const Answer heatmap = Fetch(
      port_, http::verb::post, "/api/v1/analyze",
      R"({"selection": {"sweep_ids": [)" + id + R"(]}, "heatmap": {"x": "node", "y": "batch"}})");
  // The analysis' own refusal, as gRPC gives it: the body parsed.
  EXPECT_EQ(heatmap.json()["error"]["code"], "INVALID_ARGUMENT") << heatmap.body;
  EXPECT_NE(heatmap.body.find("metric is required"), std::string::npos) << heatmap.body;
  // A request of the old shape (a selection inside the kind) is refused
  // naming the field, not read as a request over no sweeps.
  const Answer old_shape =
      Fetch(port_, http::verb::post, "/api/v1/analyze",
            R"({"heatmap": {"selection": {"sweep_ids": [)" + id + R"(]}, "metric": "gflops"}})");
  EXPECT_EQ(old_shape.json()["error"]["code"], "INVALID_ARGUMENT") << old_shape.body;
  EXPECT_NE(old_shape.body.find("selection"), std::string::npos) << old_shape.body;
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/workers").json()["workers"].size(), 0u);
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/fleet?sweep=" + id).status, 200);
  // A window longer than all history is all history, not a negative time.
  const Answer ages = Fetch(port_, http::verb::get, "/api/v1/fleet?window_seconds=1e300");
  ASSERT_EQ(ages.status, 200) << ages.body;
  EXPECT_GT(std::stoll(ages.json()["from_unix_ms"].get<std::string>()), 0) << ages.body;
  // The user's own fleet (paradnn fleet ingest): none ingested yet.
  const Answer report = Fetch(port_, http::verb::get, "/api/v1/fleet/report?top=3");
  ASSERT_EQ(report.status, 200) << report.body;
  EXPECT_EQ(report.json()["events"], "0") << report.body;
  EXPECT_EQ(report.json()["fleet"]["jobs"], "0") << report.body;
}

TEST_F(DashboardApiTest, BadRequestsNameWhatIsWrong) {
  ASSERT_NO_FATAL_FAILURE(Start());
  struct Case {
    http::verb method;
    std::string target;
    std::string body;
    int status;
    std::string code;
    std::string message;
  };
  const Case cases[] = {
      {http::verb::get, "/api/v1/sweeps/abc", "", 400, "INVALID_ARGUMENT",
       "sweep 'abc' is not a sweep id"},
      {http::verb::get, "/api/v1/sweeps/0", "", 400, "INVALID_ARGUMENT", "positive integer"},
      {http::verb::get, "/api/v1/sweeps/77", "", 404, "NOT_FOUND", "77"},
      {http::verb::get, "/api/v1/nothing", "", 404, "NOT_FOUND", "the routes: GET /api/v1/sweeps"},
      {http::verb::post, "/api/v1/sweeps", "{}", 405, "INVALID_ARGUMENT", "GET only"},
      {http::verb::get, "/api/v1/analyze", "", 405, "INVALID_ARGUMENT", "POST only"},
      {http::verb::get, "/api/v1/sweeps?x=1", "", 400, "INVALID_ARGUMENT",
       "query parameter 'x' is not one of: (none)"},
      {http::verb::get, "/api/v1/fleet?window_seconds=-3", "", 400, "INVALID_ARGUMENT",
       "window_seconds '-3'"},
      // Infinity once overflowed the window's start to a negative time.
      {http::verb::get, "/api/v1/fleet?window_seconds=inf", "", 400, "INVALID_ARGUMENT",
       "must be a finite number of seconds"},
      {http::verb::get, "/api/v1/fleet/report?top=0", "", 400, "INVALID_ARGUMENT",
       "top '0' is not a number of jobs from 1 to 1000"},
      {http::verb::get, "/api/v1/fleet/report?jobs=1", "", 400, "INVALID_ARGUMENT",
       "query parameter 'jobs' is not one of: top"},
      {http::verb::get, "/api/v1/sweeps/1/results?include_samples=maybe", "", 400,
       "INVALID_ARGUMENT", "include_samples='maybe' is not a boolean"},
      {http::verb::post, "/api/v1/analyze", R"({"heatmap": {"colour": 1}})", 400,
       "INVALID_ARGUMENT", "colour"},
      {http::verb::post, "/api/v1/analyze", "not json", 400, "INVALID_ARGUMENT",
       "not a paradnn.v1.AnalyzeRequest"},
  };
  for (const Case& c : cases) {
    const Answer answer = Fetch(port_, c.method, c.target, c.body);
    EXPECT_EQ(answer.status, c.status) << c.target << ": " << answer.body;
    const nlohmann::json json = answer.json();
    ASSERT_TRUE(json.is_object()) << c.target << ": " << answer.body;
    EXPECT_EQ(json["error"]["code"], c.code) << c.target;
    EXPECT_NE(json["error"]["message"].get<std::string>().find(c.message), std::string::npos)
        << c.target << ": " << answer.body;
  }
}

TEST_F(DashboardApiTest, TheApiWantsAClientTokenWhenTheCoordinatorDoes) {
  options_.worker_token_file = WriteTokenFile("workers", "worker-secret-1");
  options_.client_token_file = WriteTokenFile("clients", "client-secret-1");
  ASSERT_NO_FATAL_FAILURE(Start());
  // The page holds no data: it loads without a token and then asks for one.
  EXPECT_EQ(Fetch(port_, http::verb::get, "/").status, 200);
  const Answer none = Fetch(port_, http::verb::get, "/api/v1/sweeps");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.json()["error"]["code"], "UNAUTHENTICATED");
  const Answer worker =
      Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "Bearer worker-secret-1");
  EXPECT_EQ(worker.status, 403) << worker.body;
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "Bearer wrong").status, 401);
  const Answer client =
      Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "Bearer client-secret-1");
  EXPECT_EQ(client.status, 200) << client.body;
  // A header gRPC could not carry is refused here, not passed on.
  const Answer control =
      Fetch(port_, http::verb::get, "/api/v1/sweeps", "", std::string("Bearer caf\xc3\xa9"));
  EXPECT_EQ(control.status, 401);
}

// Another site's page can send simple POSTs and forms to a coordinator on
// loopback (it cannot read the answers): none of them runs anything.
TEST_F(DashboardApiTest, PagesElsewhereCannotDriveTheApi) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string analysis = R"({"boxplot": {"metric": "examples_per_second"}})";
  for (const char* type :
       {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=b", ""}) {
    const Answer answer = Fetch(port_, http::verb::post, "/api/v1/analyze", analysis, "",
                                {{http::field::content_type, type}});
    EXPECT_EQ(answer.status, 415) << type << ": " << answer.body;
    EXPECT_NE(answer.body.find("Content-Type: application/json"), std::string::npos) << type;
  }
  // JSON in any spelling is what the dashboard sends: the analysis' own answer.
  const Answer json = Fetch(port_, http::verb::post, "/api/v1/analyze", analysis, "",
                            {{http::field::content_type, "Application/JSON; charset=utf-8"}});
  EXPECT_NE(json.status, 415) << json.body;
  const std::string own = "127.0.0.1:" + std::to_string(port_);
  for (const char* origin : {"http://evil.example", "null", "http://127.0.0.1:1", "file://"}) {
    for (http::verb method : {http::verb::get, http::verb::post}) {
      const Answer answer =
          Fetch(port_, method, method == http::verb::get ? "/api/v1/sweeps" : "/api/v1/analyze",
                analysis, "", {{http::field::host, own}, {http::field::origin, origin}});
      EXPECT_EQ(answer.status, 403) << origin << ": " << answer.body;
      EXPECT_EQ(answer.json()["error"]["code"], "PERMISSION_DENIED") << origin;
      EXPECT_NE(answer.body.find("is not this dashboard's"), std::string::npos) << answer.body;
    }
  }
  // The dashboard's own page sends its own origin.
  const Answer mine = Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "",
                            {{http::field::host, own}, {http::field::origin, "http://" + own}});
  EXPECT_EQ(mine.status, 200) << mine.body;
}

// DNS rebinding: a page's own name pointed at 127.0.0.1 reaches a loopback
// coordinator with that name in Host. Only loopback names are answered, on
// every path.
TEST_F(DashboardApiTest, OnLoopbackOnlyLoopbackHostsAreAnswered) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string port = std::to_string(port_);
  for (const std::string& host :
       {"evil.example:" + port, "127.invalid:" + port, std::string("attacker.example")}) {
    for (const char* target : {"/api/v1/sweeps", "/metrics", "/", "/healthz"}) {
      const Answer answer =
          Fetch(port_, http::verb::get, target, "", "", {{http::field::host, host}});
      EXPECT_EQ(answer.status, 403) << host << target;
      EXPECT_NE(answer.body.find("is not a loopback address"), std::string::npos) << answer.body;
    }
  }
  for (const std::string& host : {"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port}) {
    EXPECT_EQ(
        Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "", {{http::field::host, host}}).status,
        200)
        << host;
  }
}

// Oversized headers get their status (they used to get a reset).
TEST_F(DashboardApiTest, OversizedHeadersAreAnswered431) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const Answer answer = Fetch(port_, http::verb::get, "/api/v1/sweeps", "", "",
                              {{http::field::user_agent, std::string(16 << 10, 'a')}});
  EXPECT_EQ(answer.status, 431);
  EXPECT_NE(answer.body.find("header fields too large"), std::string::npos) << answer.body;
  EXPECT_EQ(Fetch(port_, http::verb::get, "/healthz").status, 200);  // and serves on
}

TEST_F(DashboardApiTest, BeyondLoopbackWithoutTokensTheApiServesNothing) {
  options_.metrics_listen = "0.0.0.0:0";
  ASSERT_NO_FATAL_FAILURE(Start());
  EXPECT_EQ(Fetch(port_, http::verb::get, "/").status, 200);
  const Answer api = Fetch(port_, http::verb::get, "/api/v1/sweeps");
  EXPECT_EQ(api.status, 403);
  EXPECT_NE(api.body.find("--client-token-file"), std::string::npos) << api.body;
}

}  // namespace
}  // namespace paradnn::server
