#include "server/metrics_http.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <list>
#include <memory>
#include <system_error>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/address.h"

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

// Connections that have sent no whole request yet, at most: past it the
// one waiting longest is closed for each new one. 1,100 idle connections
// otherwise held a descriptor each for their 10 s, and /metrics and /readyz
// waited behind them (or found no descriptor at all).
constexpr size_t kMaxWaitingSessions = 256;

class HttpSession;

// The sessions still waiting for their request, oldest first, and how many
// were closed to make room. Touched on the server's one I/O thread only.
struct WaitingSessions {
  std::list<std::weak_ptr<HttpSession>> oldest_first;
  int64_t evicted_total = 0;
};

// One connection: read a request, answer it, close.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, const MetricsHttpHandlers* handlers, bool loopback_only,
              WaitingSessions* waiting)
      : stream_(std::move(socket)),
        handlers_(handlers),
        loopback_only_(loopback_only),
        waiting_(waiting) {}

  void Start() {
    waiting_->oldest_first.push_back(weak_from_this());
    waiting_position_ = std::prev(waiting_->oldest_first.end());
    is_waiting_ = true;
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(
        stream_, buffer_, request_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  // Closes the session that has waited longest for its request; false when
  // none waits.
  static bool EvictOldestWaiting(WaitingSessions* waiting) {
    while (!waiting->oldest_first.empty()) {
      std::shared_ptr<HttpSession> oldest = waiting->oldest_first.front().lock();
      waiting->oldest_first.pop_front();
      if (!oldest) continue;
      oldest->is_waiting_ = false;
      ++waiting->evicted_total;
      beast::error_code ignored;
      oldest->stream_.socket().close(ignored);  // its read ends with operation_aborted
      return true;
    }
    return false;
  }

 private:
  void LeaveWaiting() {
    if (!is_waiting_) return;
    is_waiting_ = false;
    waiting_->oldest_first.erase(waiting_position_);
  }

  void OnRead(beast::error_code ec) {
    LeaveWaiting();
    // Too large says so (Beast's limits: 8 KiB of header, 1 MiB of body);
    // a timeout, a closed or a malformed request has nothing to answer.
    if (ec == http::error::header_limit || ec == http::error::body_limit) {
      HttpResponse response;
      const bool header = ec == http::error::header_limit;
      response.status = header ? 431 : 413;
      response.body = header ? "request header fields too large (at most 8 KiB in all)\n"
                             : "request body too large (at most 1 MiB)\n";
      Answer(std::move(response));
      return;
    }
    if (ec) return;
    const std::string target(request_.target());
    const size_t question = target.find('?');
    const std::string path = target.substr(0, question);
    const std::string host(request_[http::field::host]);
    if (loopback_only_ && !host.empty() && !common::IsLoopbackHostHeader(host)) {
      Answer(ForeignHostResponse(host));
      return;
    }
    const bool builtin = path == "/metrics" || path == "/healthz" || path == "/readyz";
    if (!builtin && handlers_->other) {
      HttpRequest request{std::string(request_.method_string()),
                          path,
                          question == std::string::npos ? "" : target.substr(question + 1),
                          std::move(request_.body()),
                          std::string(request_[http::field::authorization]),
                          host,
                          std::string(request_[http::field::origin]),
                          std::string(request_[http::field::content_type])};
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

  // The answer to a request addressed to a name of its own, not loopback.
  static HttpResponse ForeignHostResponse(const std::string& host) {
    HttpResponse response;
    response.status = static_cast<int>(http::status::forbidden);
    response.body = absl::StrCat(
        "Host '", absl::CHexEscape(host.substr(0, 256)),
        "' is not a loopback address: this endpoint listens on loopback and answers requests "
        "addressed to 127.0.0.1, [::1] or localhost only (a web page reaching it through a name "
        "of its own is refused)\n");
    return response;
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
      absl::StrAppend(&response.body,
                      "# HELP paradnn_http_idle_connections_closed_total HTTP connections closed "
                      "before sending a request, to make room for new ones (at most ",
                      kMaxWaitingSessions,
                      " wait at once).\n"
                      "# TYPE paradnn_http_idle_connections_closed_total counter\n"
                      "paradnn_http_idle_connections_closed_total ",
                      waiting_->evicted_total, "\n");
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
  const bool loopback_only_;
  WaitingSessions* const waiting_;
  std::list<std::weak_ptr<HttpSession>>::iterator waiting_position_;
  bool is_waiting_ = false;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

}  // namespace

struct MetricsHttpServer::Impl {
  MetricsHttpHandlers handlers;
  WaitingSessions waiting;  // outlives the sessions io holds
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  int port = 0;
  bool loopback_only = false;  // bound to a loopback address

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        if (waiting.oldest_first.size() >= kMaxWaitingSessions) {
          HttpSession::EvictOldestWaiting(&waiting);
        }
        std::make_shared<HttpSession>(std::move(socket), &handlers, loopback_only, &waiting)
            ->Start();
        Accept();
        return;
      }
      // Out of descriptors the connection stays queued: free one held by an
      // idle connection and take it now, or retry shortly (at once would
      // spin) when none is idle.
      if ((ec == asio::error::no_descriptors || ec.value() == ENFILE) &&
          HttpSession::EvictOldestWaiting(&waiting)) {
        Accept();
        return;
      }
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
  impl->loopback_only = address.is_loopback();
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    // A handler out of memory (an analysis too large) loses its connection,
    // not the listener: run() resumes after the throw.
    for (;;) {
      try {
        raw->io.run();
        return;
      } catch (const std::bad_alloc&) {
        spdlog::error("HTTP listener: out of memory answering a request; its connection is lost");
      }
    }
  });
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
