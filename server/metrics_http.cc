#include "server/metrics_http.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paradnn::server {

std::string FileDescriptorPressure(double share) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return "";
  size_t open = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++open;
  }
  // Listing the descriptors takes one: failing for want of it is the answer.
  if (ec == std::errc::too_many_files_open || ec == std::errc::too_many_files_open_in_system) {
    return absl::StrCat("file descriptors: all ", files.rlim_cur, " open (", ec.message(),
                        "); new connections are refused");
  }
  if (ec || static_cast<double>(open) < share * static_cast<double>(files.rlim_cur)) return "";
  return absl::StrCat("file descriptors: ", open, " of ", files.rlim_cur,
                      " open; new connections may be refused");
}

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// One connection: read a request, answer it, close.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, const MetricsHttpHandlers* handlers)
      : stream_(std::move(socket)), handlers_(handlers) {}

  void Start() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(
        stream_, buffer_, request_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) return;  // timeout, closed, malformed: nothing to answer
    const std::string target(request_.target());
    const size_t question = target.find('?');
    const std::string path = target.substr(0, question);
    const bool builtin = path == "/metrics" || path == "/healthz" || path == "/readyz";
    if (!builtin && handlers_->other) {
      HttpRequest request{std::string(request_.method_string()), path,
                          question == std::string::npos ? "" : target.substr(question + 1),
                          std::move(request_.body()),
                          std::string(request_[http::field::authorization])};
      // The answer may take a while (an analysis); the write has its own
      // timeout.
      stream_.expires_never();
      handlers_->other(std::move(request), [self = shared_from_this()](HttpResponse response) {
        asio::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
          self->Answer(std::move(response));
        });
      });
      return;
    }
    Answer(BuiltinResponse(path));
  }

  HttpResponse BuiltinResponse(const std::string& path) const {
    HttpResponse response;
    if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
      response.status = static_cast<int>(http::status::method_not_allowed);
      response.headers.emplace_back("Allow", "GET, HEAD");
      response.body = "only GET and HEAD\n";
    } else if (path == "/metrics") {
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = handlers_->metrics ? handlers_->metrics() : "";
    } else if (path == "/healthz") {
      response.body = "ok\n";
    } else if (path == "/readyz") {
      const std::string reason = handlers_->not_ready_reason ? handlers_->not_ready_reason() : "";
      response.status =
          static_cast<int>(reason.empty() ? http::status::ok : http::status::service_unavailable);
      response.body = reason.empty() ? "ready\n" : reason + "\n";
    } else {
      response.status = static_cast<int>(http::status::not_found);
      response.body = "not found: try /metrics, /healthz or /readyz\n";
    }
    return response;
  }

  void Answer(HttpResponse answer) {
    response_.version(request_.version());
    response_.keep_alive(false);
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(http::field::server, "paradnn-coordinator");
    response_.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response_.set(name, value);
    response_.content_length(answer.body.size());
    if (request_.method() != http::verb::head) response_.body() = std::move(answer.body);
    stream_.expires_after(std::chrono::seconds(10));
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  const MetricsHttpHandlers* handlers_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

}  // namespace

struct MetricsHttpServer::Impl {
  MetricsHttpHandlers handlers;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  int port = 0;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        std::make_shared<HttpSession>(std::move(socket), &handlers)->Start();
        Accept();
        return;
      }
      // Out of descriptors the connection stays queued: retrying at once
      // would spin. Try again shortly, when some may be free.
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this](beast::error_code timer_ec) {
        if (!timer_ec) Accept();
      });
    });
  }
};

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& host_port, MetricsHttpHandlers handlers) {
  const size_t colon = host_port.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: '", host_port,
                     "' is not HOST:PORT (e.g. 127.0.0.1:9464; port 0 picks one)"));
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen: '", host, "' is not an IP address (or localhost)"));
  }
  auto impl = std::make_unique<Impl>();
  impl->handlers = std::move(handlers);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen: cannot listen on ", host_port, ": ", ec.message()));
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(impl)));
}

MetricsHttpServer::MetricsHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

void MetricsHttpServer::Stop() {
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
  });
  // Open sessions end on their own timeout; stopping drops them now.
  impl_->io.stop();
  impl_->thread.join();
}

int MetricsHttpServer::port() const { return impl_->port; }

}  // namespace paradnn::server
