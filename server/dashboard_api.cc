#include "server/dashboard_api.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/dashboard_assets.h"

namespace paradnn::server {
namespace {

constexpr absl::string_view kApiPrefix = "/api/v1/";
constexpr absl::string_view kRoutes =
    "GET /api/v1/sweeps, /api/v1/sweeps/ID, /api/v1/sweeps/ID/results, /api/v1/workers, "
    "/api/v1/fleet, /api/v1/fleet/report; POST /api/v1/analyze, /api/v1/predict "
    "(docs/dashboard.md)";

// gRPC's codes are absl's, number for number (as worker/worker_agent.cc uses).
std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::FAILED_PRECONDITION:
      return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    default:
      return 500;
  }
}

HttpResponse JsonResponse(std::string body) {
  HttpResponse response;
  response.content_type = "application/json; charset=utf-8";
  response.body = std::move(body);
  response.headers.emplace_back("Cache-Control", "no-store");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return response;
}

// Protobuf's JSON mapping with the proto's field names and every field
// present (zeros too), so a page never has to guess a default.
std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

grpc::Status InvalidArgument(const std::string& message) {
  return {grpc::StatusCode::INVALID_ARGUMENT, message};
}

std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    int value = 0;
    if (text[i] == '%' && i + 2 < text.size() && absl::ascii_isxdigit(text[i + 1]) &&
        absl::ascii_isxdigit(text[i + 2]) && absl::SimpleHexAtoi(text.substr(i + 1, 2), &value)) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i] == '+' ? ' ' : text[i]);
    }
  }
  return out;
}

// The query's parameters; InvalidArgument naming one not in `allowed`.
grpc::Status ParseQuery(const std::string& query, const std::vector<std::string>& allowed,
                        std::map<std::string, std::string>* out) {
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, '=');
    std::string key = PercentDecode(kv.first);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return InvalidArgument(absl::StrCat(
          "query parameter '", key,
          "' is not one of: ", allowed.empty() ? "(none)" : absl::StrJoin(allowed, ", ")));
    }
    (*out)[key] = PercentDecode(kv.second);
  }
  return grpc::Status::OK;
}

grpc::Status ParseBool(const std::map<std::string, std::string>& query, const std::string& key,
                       bool* value) {
  const auto it = query.find(key);
  if (it == query.end()) return grpc::Status::OK;
  if (it->second == "true" || it->second == "1" || it->second.empty()) {
    *value = true;
  } else if (it->second == "false" || it->second == "0") {
    *value = false;
  } else {
    return InvalidArgument(
        absl::StrCat(key, "='", it->second, "' is not a boolean (true, false, 1 or 0)"));
  }
  return grpc::Status::OK;
}

grpc::Status ParseSweepId(absl::string_view text, const std::string& field, int64_t* id) {
  if (!absl::SimpleAtoi(text, id) || *id <= 0) {
    return InvalidArgument(
        absl::StrCat(field, " '", text, "' is not a sweep id (a positive integer)"));
  }
  return grpc::Status::OK;
}

// The request body as `message` (protobuf's JSON mapping; an empty body is
// the empty message); InvalidArgument naming what did not parse.
grpc::Status ParseBody(const std::string& body, google::protobuf::Message* message) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return grpc::Status::OK;
  const google::protobuf::util::Status parsed =
      google::protobuf::util::JsonStringToMessage(body, message);
  if (!parsed.ok()) {
    return InvalidArgument(
        absl::StrCat("request body is not a ", message->GetTypeName(),
                     " in protobuf's JSON mapping: ", parsed.message().as_string()));
  }
  return grpc::Status::OK;
}

// What an Authorization header may hold to be sent on as gRPC metadata.
bool IsSendableHeader(const std::string& value) {
  if (value.size() > 4096) return false;
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

HttpResponse AssetResponse(const DashboardAsset& asset) {
  HttpResponse response;
  response.content_type = std::string(asset.content_type);
  response.body = std::string(asset.body);
  // The page's scripts are only its own and the bundled libraries (Vega
  // compiles its expressions, hence 'unsafe-eval'); a worker's text shown on
  // the page cannot bring a script of its own.
  response.headers.emplace_back(
      "Content-Security-Policy",
      "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
      "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

// True when a browser's `origin` is the dashboard's own: the scheme and the
// Host the request was sent to. A page elsewhere (another port too, or
// "null" from a sandbox or a file) is not.
bool IsOwnOrigin(const std::string& origin, const std::string& host) {
  const std::string lower = absl::AsciiStrToLower(origin);
  const std::string own = absl::AsciiStrToLower(host);
  return !own.empty() &&
         (lower == absl::StrCat("http://", own) || lower == absl::StrCat("https://", own));
}

// "application/json" of "Application/JSON; charset=utf-8".
std::string MediaType(const std::string& content_type) {
  return absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(content_type.substr(0, content_type.find(';'))));
}

HttpResponse MethodNotAllowed(const std::string& allow) {
  HttpResponse response = ErrorResponse(
      {grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("this route takes ", allow, " only")});
  response.status = 405;
  response.headers.emplace_back("Allow", allow);
  return response;
}

}  // namespace

HttpResponse ErrorResponse(const grpc::Status& status) {
  const nlohmann::json body = {
      {"error",
       {{"code", StatusCodeName(status.error_code())}, {"message", status.error_message()}}}};
  HttpResponse response =
      JsonResponse(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  response.status = HttpStatusOf(status.error_code());
  return response;
}

DashboardApi::DashboardApi(const std::shared_ptr<grpc::Channel>& channel,
                           DashboardApiOptions options)
    : stub_(v1::Coordinator::NewStub(channel)),
      options_(options),
      calls_(std::make_unique<common::WorkPool>(4, "dashboard-api")) {}

DashboardApi::~DashboardApi() { calls_.reset(); }

void DashboardApi::Handle(HttpRequest request, HttpResponder respond) {
  if (!absl::StartsWith(request.path, kApiPrefix)) {
    if (request.method != "GET" && request.method != "HEAD") {
      respond(MethodNotAllowed("GET, HEAD"));
      return;
    }
    const std::string name = request.path == "/" ? "index.html"
                             : absl::StartsWith(request.path, "/assets/")
                                 ? request.path.substr(std::string("/assets/").size())
                                 : "";
    const DashboardAsset* asset = FindDashboardAsset(name);
    respond(asset != nullptr ? AssetResponse(*asset)
                             : ErrorResponse({grpc::StatusCode::NOT_FOUND,
                                              absl::StrCat("no page ", request.path,
                                                           ": the dashboard is at /, its API "
                                                           "under /api/v1/")}));
    return;
  }
  if (!options_.api_allowed) {
    respond(ErrorResponse(
        {grpc::StatusCode::PERMISSION_DENIED,
         "the JSON API serves results only on loopback unless the coordinator requires client "
         "tokens (--client-token-file) or runs with --insecure (docs/dashboard.md)"}));
    return;
  }
  // A web page elsewhere may send a request here (a form, a simple POST)
  // though it cannot read the answer: refused before anything runs.
  if (!request.origin.empty() && !IsOwnOrigin(request.origin, request.host)) {
    respond(ErrorResponse(
        {grpc::StatusCode::PERMISSION_DENIED,
         absl::StrCat("Origin '", absl::CHexEscape(request.origin.substr(0, 256)),
                      "' is not this dashboard's (http://", absl::CHexEscape(request.host),
                      "): the API answers the dashboard's own pages and clients that send no "
                      "Origin")}));
    return;
  }
  if (!IsSendableHeader(request.authorization)) {
    respond(ErrorResponse({grpc::StatusCode::UNAUTHENTICATED,
                           "the Authorization header holds characters a token cannot (printable "
                           "ASCII, at most 4096); send 'Authorization: Bearer TOKEN'"}));
    return;
  }
  if (calls_->pending() >= options_.max_pending) {
    respond(ErrorResponse({grpc::StatusCode::UNAVAILABLE,
                           absl::StrCat(options_.max_pending,
                                        " API requests are already waiting; try again shortly")}));
    return;
  }
  calls_->Run([this, request = std::move(request), respond = std::move(respond)] {
    respond(CallApi(request));
  });
}

namespace {

// A unary call with `request`, answered as JSON.
template <typename Response, typename Request, typename Call>
HttpResponse Unary(grpc::ClientContext* context, const Request& request, Call call) {
  Response response;
  const grpc::Status status = call(context, request, &response);
  return status.ok() ? JsonResponse(ToJson(response)) : ErrorResponse(status);
}

grpc::Status ParseFleetQuery(const std::string& text, v1::FleetGoodputRequest* fleet) {
  std::map<std::string, std::string> query;
  if (grpc::Status s = ParseQuery(text, {"sweep", "window_seconds"}, &query); !s.ok()) return s;
  int64_t sweep_id = 0;
  double window = 0;
  if (query.count("sweep") != 0) {
    if (grpc::Status s = ParseSweepId(query["sweep"], "sweep", &sweep_id); !s.ok()) return s;
  }
  if (query.count("window_seconds") != 0 &&
      (!absl::SimpleAtod(query["window_seconds"], &window) || !(window >= 0))) {
    return InvalidArgument(absl::StrCat("window_seconds '", query["window_seconds"],
                                        "' is not a number of seconds >= 0"));
  }
  fleet->set_sweep_id(sweep_id);
  fleet->set_window_seconds(window);
  return grpc::Status::OK;
}

// The query of GET /api/v1/fleet/report: top=N jobs per badput cause, as
// `paradnn fleet report --top` (1..1000; default 5).
grpc::Status ParseFleetReportQuery(const std::string& text, v1::FleetReportRequest* report) {
  std::map<std::string, std::string> query;
  if (grpc::Status s = ParseQuery(text, {"top"}, &query); !s.ok()) return s;
  if (query.count("top") == 0) return grpc::Status::OK;
  int top = 0;
  if (!absl::SimpleAtoi(query["top"], &top) || top < 1 || top > 1000) {
    return InvalidArgument(
        absl::StrCat("top '", query["top"], "' is not a number of jobs from 1 to 1000"));
  }
  report->set_top_jobs(top);
  return grpc::Status::OK;
}

}  // namespace

void DashboardApi::Prepare(const HttpRequest& request, grpc::ClientContext* context) const {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(options_.deadline_seconds));
  if (!request.authorization.empty()) {
    context->AddMetadata("authorization", request.authorization);
  }
}

HttpResponse DashboardApi::CallApi(const HttpRequest& request) const {
  const std::vector<std::string> parts =
      absl::StrSplit(request.path.substr(kApiPrefix.size()), '/', absl::SkipEmpty());
  const std::string route = absl::StrJoin(parts, "/");
  const bool is_sweep = parts.size() == 2 && parts[0] == "sweeps";
  const bool is_results = parts.size() == 3 && parts[0] == "sweeps" && parts[2] == "results";
  const bool takes_post = route == "analyze" || route == "predict";
  if (route != "sweeps" && route != "workers" && route != "fleet" && route != "fleet/report" &&
      !takes_post && !is_sweep && !is_results) {
    return ErrorResponse(
        {grpc::StatusCode::NOT_FOUND, absl::StrCat("no API route ", request.method, " ",
                                                   request.path, "; the routes: ", kRoutes)});
  }
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (takes_post != (request.method == "POST") || (!takes_post && !get)) {
    return MethodNotAllowed(takes_post ? "POST" : "GET");
  }
  // Only JSON: a form or text/plain POST is what another site's page can
  // send without asking (no CORS preflight).
  if (takes_post && MediaType(request.content_type) != "application/json") {
    HttpResponse response =
        ErrorResponse({grpc::StatusCode::INVALID_ARGUMENT,
                       absl::StrCat("POST takes Content-Type: application/json, not '",
                                    absl::CHexEscape(request.content_type.substr(0, 256)), "'")});
    response.status = 415;
    return response;
  }
  if (takes_post) return PostRoute(request, route);
  if (is_sweep || is_results) {
    int64_t id = 0;
    if (grpc::Status s = ParseSweepId(parts[1], "sweep", &id); !s.ok()) return ErrorResponse(s);
    return is_results ? GetSweepResults(request, id) : GetSweep(request, id);
  }
  grpc::ClientContext context;
  Prepare(request, &context);
  auto* stub = stub_.get();
  if (route == "fleet") {
    v1::FleetGoodputRequest fleet;
    if (grpc::Status s = ParseFleetQuery(request.query, &fleet); !s.ok()) return ErrorResponse(s);
    return Unary<v1::FleetGoodputResponse>(
        &context, fleet,
        [stub](auto* c, const auto& q, auto* r) { return stub->FleetGoodput(c, q, r); });
  }
  if (route == "fleet/report") {
    v1::FleetReportRequest report;
    if (grpc::Status s = ParseFleetReportQuery(request.query, &report); !s.ok()) {
      return ErrorResponse(s);
    }
    return Unary<v1::FleetReportResponse>(
        &context, report,
        [stub](auto* c, const auto& q, auto* r) { return stub->FleetReport(c, q, r); });
  }
  std::map<std::string, std::string> query;
  if (grpc::Status s = ParseQuery(request.query, {}, &query); !s.ok()) return ErrorResponse(s);
  if (route == "workers") {
    return Unary<v1::ListWorkersResponse>(
        &context, v1::ListWorkersRequest(),
        [stub](auto* c, const auto& q, auto* r) { return stub->ListWorkers(c, q, r); });
  }
  return Unary<v1::ListSweepsResponse>(
      &context, v1::ListSweepsRequest(),
      [stub](auto* c, const auto& q, auto* r) { return stub->ListSweeps(c, q, r); });
}

HttpResponse DashboardApi::PostRoute(const HttpRequest& request, const std::string& route) const {
  grpc::ClientContext context;
  Prepare(request, &context);
  auto* stub = stub_.get();
  if (route == "analyze") {
    v1::AnalyzeRequest analyze;
    if (grpc::Status s = ParseBody(request.body, &analyze); !s.ok()) return ErrorResponse(s);
    return Unary<v1::AnalyzeResponse>(&context, analyze, [stub](auto* c, const auto& q, auto* r) {
      return stub->Analyze(c, q, r);
    });
  }
  v1::PredictRequest predict;
  if (grpc::Status s = ParseBody(request.body, &predict); !s.ok()) return ErrorResponse(s);
  return Unary<v1::PredictResponse>(&context, predict, [stub](auto* c, const auto& q, auto* r) {
    return stub->Predict(c, q, r);
  });
}

HttpResponse DashboardApi::GetSweep(const HttpRequest& request, int64_t sweep_id) const {
  std::map<std::string, std::string> query;
  if (grpc::Status s = ParseQuery(request.query, {}, &query); !s.ok()) return ErrorResponse(s);
  grpc::ClientContext context;
  Prepare(request, &context);
  v1::GetSweepRequest sweep;
  sweep.set_sweep_id(sweep_id);
  auto* stub = stub_.get();
  return Unary<v1::SweepStatus>(
      &context, sweep, [stub](auto* c, const auto& q, auto* r) { return stub->GetSweep(c, q, r); });
}

HttpResponse DashboardApi::GetSweepResults(const HttpRequest& request, int64_t sweep_id) const {
  std::map<std::string, std::string> query;
  v1::QueryResultsRequest results;
  bool samples = false;
  if (grpc::Status s = ParseQuery(request.query, {"include_samples"}, &query); !s.ok()) {
    return ErrorResponse(s);
  }
  if (grpc::Status s = ParseBool(query, "include_samples", &samples); !s.ok()) {
    return ErrorResponse(s);
  }
  results.set_sweep_id(sweep_id);
  results.set_include_samples(samples);
  grpc::ClientContext context;
  Prepare(request, &context);
  std::unique_ptr<grpc::ClientReader<v1::ResultRow>> reader =
      stub_->QueryResults(&context, results);
  std::string body = "{\"rows\":[";
  v1::ResultRow row;
  for (bool first = true; reader->Read(&row); first = false) {
    if (!first) body.push_back(',');
    absl::StrAppend(&body, ToJson(row));
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return ErrorResponse(status);
  absl::StrAppend(&body, "]}");
  return JsonResponse(std::move(body));
}

}  // namespace paradnn::server
