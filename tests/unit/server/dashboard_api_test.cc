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
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/auth.h"
#include "paradnn/v1/coordinator.grpc.pb.h"
#include "server/coordinator_server.h"

namespace paradnn::server {
namespace {

namespace http = boost::beast::http;

struct Answer {
  int status = 0;
  std::string content_type;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One HTTP request to 127.0.0.1:port.
Answer Fetch(int port, http::verb method, const std::string& target, const std::string& body = "",
             const std::string& authorization = "") {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                static_cast<unsigned short>(port)));
  http::request<http::string_body> request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
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
    std::string pattern =
        (std::filesystem::temp_directory_path() / "dashboard-api-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.db_path = dir_ + "/dashboard.db";
    options_.listen = "127.0.0.1:0";
    options_.metrics_listen = "127.0.0.1:0";
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Start() {
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> started = CoordinatorServer::Start(options_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    port_ = PortOf(server_->metrics_address());
  }

  std::string WriteTokenFile(const std::string& name, const std::string& token) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << token << "\n";
    EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
    return path;
  }

  std::unique_ptr<v1::Coordinator::Stub> Stub() const {
    return v1::Coordinator::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  std::string dir_;
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
  for (const char* asset : {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "app.js",
                            "charts.js", "style.css"}) {
    const Answer a = Fetch(port_, http::verb::get, std::string("/assets/") + asset);
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
      R"({"heatmap": {"selection": {"sweep_ids": [)" + id + R"(]}, "x": "node", "y": "batch"}})");
  // No result yet: the analysis' own refusal, as gRPC gives it.
  EXPECT_EQ(heatmap.json()["error"]["code"], "INVALID_ARGUMENT") << heatmap.body;
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/workers").json()["workers"].size(), 0u);
  EXPECT_EQ(Fetch(port_, http::verb::get, "/api/v1/fleet?sweep=" + id).status, 200);
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
