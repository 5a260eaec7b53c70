#include "worker/runner/gang_rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paradnn::runner {
namespace {

constexpr const char* kAdmitted = "admitted";
// How long rank 0 waits for a refused rank to read its verdict, so that the
// refused side can name the refusal rather than a closed connection.
constexpr std::chrono::milliseconds kRefusalReadMs(5000);

std::chrono::milliseconds Timeout(const v1::GangRole& role) {
  return std::chrono::milliseconds(static_cast<int64_t>(role.collective_timeout_s() * 1000));
}

std::string TimeoutText(const v1::GangRole& role) {
  return absl::StrFormat("%g s", role.collective_timeout_s());
}

std::vector<uint8_t> Bytes(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}
std::string Text(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// The first line of a c10d message (its backtraces follow).
std::string Reason(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

std::string JoinKey(int rank) { return absl::StrCat("paradnn/join/", rank); }
std::string VerdictKey(int rank) { return absl::StrCat("paradnn/verdict/", rank); }
std::string VerdictReadKey(int rank) { return absl::StrCat("paradnn/verdict_read/", rank); }

// The local address of a route to `host` (no packet is sent: a UDP
// connect only picks the route); "127.0.0.1" where none is found.
std::string LocalAddressTowards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  std::string local = "127.0.0.1";
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return local;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in self{};
  socklen_t length = sizeof(self);
  char text[INET_ADDRSTRLEN] = {};
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&self), &length) == 0 &&
      inet_ntop(AF_INET, &self.sin_addr, text, sizeof(text)) != nullptr) {
    local = text;
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return local;
}

c10::intrusive_ptr<c10d::Store> OpenStore(const v1::GangRole& role) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(role.rendezvous_port());
  options.isServer = role.host_rank() == 0;
  options.waitWorkers = false;
  options.timeout = Timeout(role);
  const std::string self = GangRankName(role, role.host_rank());
  try {
    return c10::make_intrusive<c10d::TCPStore>(role.rendezvous_host(), options);
  } catch (const std::exception& e) {
    if (role.host_rank() == 0) {
      throw GangBroken(absl::StrCat(self, " could not serve the rendezvous at ",
                                    RendezvousAddress(role), ": ", Reason(e)));
    }
    throw GangBroken(absl::StrCat(self, " could not reach ", GangRankName(role, 0), " at ",
                                  RendezvousAddress(role), " within ", TimeoutText(role), ": ",
                                  Reason(e)));
  }
}

// Rank 0's reason to refuse `shown` (what a joining rank presented), or "".
std::string Refusal(const v1::GangRole& role, const v1::GangRole& shown) {
  const std::string who = absl::StrCat("rank ", shown.host_rank(), " (worker ",
                                       shown.worker_ids().empty() ? "?" : shown.worker_ids(0), ")");
  if (shown.gang_tag() != role.gang_tag()) {
    return absl::StrCat(who, " joined for '", shown.gang_tag(), "', but ", GangRankName(role, 0),
                        " at ", RendezvousAddress(role), " serves '", role.gang_tag(),
                        "': refused");
  }
  if (shown.secret() != role.secret()) {
    return absl::StrCat(who, " gave the wrong secret for ", role.gang_tag(), ": refused by ",
                        GangRankName(role, 0));
  }
  return "";
}

// Rank 0: reads each rank's join in turn and gives its verdict. A refusal
// ends the gang: every rank is told, and this rank throws it.
void AdmitRanks(const v1::GangRole& role, c10d::Store& store) {
  for (int rank = 1; rank < role.hosts(); ++rank) {
    v1::GangRole shown;
    try {
      store.wait({JoinKey(rank)}, Timeout(role));
      shown.ParseFromString(Text(store.get(JoinKey(rank))));
    } catch (const std::exception& e) {
      throw GangBroken(absl::StrCat(GangRankName(role, rank), " did not join ",
                                    GangRankName(role, 0), " at ", RendezvousAddress(role),
                                    " within ", TimeoutText(role), ": ", Reason(e)));
    }
    const std::string refusal = Refusal(role, shown);
    if (refusal.empty()) {
      store.set(VerdictKey(rank), Bytes(kAdmitted));
      continue;
    }
    for (int told = 1; told < role.hosts(); ++told) store.set(VerdictKey(told), Bytes(refusal));
    try {
      store.wait({VerdictReadKey(rank)}, kRefusalReadMs);
    } catch (const std::exception&) {
      // The refused rank is gone or slow: the refusal stands either way.
    }
    throw GangBroken(refusal);
  }
}

// A rank > 0: shows its tag and secret and waits for rank 0's verdict.
void AskAdmission(const v1::GangRole& role, c10d::Store& store) {
  v1::GangRole shown;
  shown.set_host_rank(role.host_rank());
  shown.set_gang_tag(role.gang_tag());
  shown.set_secret(role.secret());
  shown.add_worker_ids(role.worker_ids_size() > role.host_rank() ? role.worker_ids(role.host_rank())
                                                                 : "?");
  const int rank = role.host_rank();
  std::string verdict;
  try {
    store.set(JoinKey(rank), Bytes(shown.SerializeAsString()));
    store.wait({VerdictKey(rank)}, Timeout(role));
    verdict = Text(store.get(VerdictKey(rank)));
    store.set(VerdictReadKey(rank), Bytes("1"));
  } catch (const std::exception& e) {
    if (!verdict.empty() && verdict != kAdmitted) throw GangBroken(verdict);
    throw GangBroken(absl::StrCat(GangRankName(role, 0), " at ", RendezvousAddress(role), " gave ",
                                  GangRankName(role, rank), " no verdict within ",
                                  TimeoutText(role), ": ", Reason(e)));
  }
  if (verdict != kAdmitted) throw GangBroken(verdict);
}

}  // namespace

absl::Status ValidateGangRole(const v1::GangRole& gang, int64_t hosts, int64_t devices_per_host) {
  auto bad = [](const std::string& field, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("gang.", field, ": ", why));
  };
  if (gang.hosts() != hosts) {
    return bad("hosts", absl::StrCat(gang.hosts(), " differs from the job's params.hosts ", hosts));
  }
  if (gang.host_rank() < 0 || gang.host_rank() >= gang.hosts()) {
    return bad("host_rank", absl::StrCat(gang.host_rank(), " is out of range 0..", hosts - 1));
  }
  if (gang.devices_per_host() != devices_per_host) {
    return bad("devices_per_host",
               absl::StrCat(gang.devices_per_host(), " differs from the job's params.devices ",
                            devices_per_host));
  }
  if (gang.rendezvous_host().empty()) return bad("rendezvous_host", "empty; rank 0's address");
  if (gang.rendezvous_port() < 1 || gang.rendezvous_port() > 65535) {
    return bad("rendezvous_port",
               absl::StrCat(gang.rendezvous_port(), " is out of range 1..65535"));
  }
  if (!(gang.collective_timeout_s() > 0)) {
    return bad("collective_timeout_s", absl::StrCat(gang.collective_timeout_s(), " must be > 0"));
  }
  if (gang.worker_ids_size() != 0 && gang.worker_ids_size() != gang.hosts()) {
    return bad("worker_ids", absl::StrCat(gang.worker_ids_size(), " ids for ", gang.hosts(),
                                          " hosts; one per host rank (or none)"));
  }
  return absl::OkStatus();
}

std::string GangRankName(const v1::GangRole& gang, int host_rank) {
  const bool known = host_rank >= 0 && host_rank < gang.worker_ids_size();
  return absl::StrCat("rank ", host_rank, " (worker ", known ? gang.worker_ids(host_rank) : "?",
                      ")");
}

std::string RendezvousAddress(const v1::GangRole& gang) {
  return absl::StrCat(gang.rendezvous_host(), ":", gang.rendezvous_port());
}

GangMembership JoinGang(const v1::GangRole& role) {
  GangMembership joined;
  joined.role = role;
  c10::intrusive_ptr<c10d::Store> store = OpenStore(role);
  if (role.host_rank() == 0) {
    AdmitRanks(role, *store);
  } else {
    AskAdmission(role, *store);
  }
  // Keys of process groups and control traffic live under the gang's tag.
  joined.store = c10::make_intrusive<c10d::PrefixStore>(role.gang_tag(), store);
  joined.local_address = LocalAddressTowards(role.rendezvous_host(), role.rendezvous_port());
  return joined;
}

GangControl::GangControl(GangMembership membership) : membership_(std::move(membership)) {}

int64_t GangControl::FollowRankZero(int64_t mine) {
  const std::string key = absl::StrCat("paradnn/decision/", decisions_++);
  const v1::GangRole& role = membership_.role;
  c10d::Store& store = *membership_.store;
  try {
    if (role.host_rank() == 0) {
      store.set(key, Bytes(absl::StrCat(mine)));
      return mine;
    }
    store.wait({key}, Timeout(role));
    int64_t decided = 0;
    if (!absl::SimpleAtoi(Text(store.get(key)), &decided)) throw std::runtime_error("garbled");
    return decided;
  } catch (const std::exception& e) {
    throw GangBroken(absl::StrCat(GangRankName(role, role.host_rank()),
                                  " lost the gang's control channel to ", GangRankName(role, 0),
                                  " at ", RendezvousAddress(role), " (waited up to ",
                                  TimeoutText(role), "): ", Reason(e)));
  }
}

std::vector<std::string> GangControl::GatherAtRankZero(const std::string& mine) {
  const v1::GangRole& role = membership_.role;
  c10d::Store& store = *membership_.store;
  auto key = [](int rank) { return absl::StrCat("paradnn/gather/", rank); };
  std::vector<std::string> all;
  int rank = role.host_rank();
  try {
    if (role.host_rank() != 0) {
      store.set(key(rank), Bytes(mine));
      return all;
    }
    all.push_back(mine);
    for (rank = 1; rank < role.hosts(); ++rank) {
      store.wait({key(rank)}, Timeout(role));
      all.push_back(Text(store.get(key(rank))));
    }
    return all;
  } catch (const std::exception& e) {
    throw GangBroken(absl::StrCat(GangRankName(role, rank), " sent no step times to ",
                                  GangRankName(role, 0), " within ", TimeoutText(role), ": ",
                                  Reason(e)));
  }
}

namespace {

std::string FailureKey(int rank) { return absl::StrCat("paradnn/failure/", rank); }
std::string FailureReadKey(int rank) { return absl::StrCat("paradnn/failure-read/", rank); }

}  // namespace

void GangControl::PublishFailure(v1::Outcome outcome, const std::string& message) {
  try {
    membership_.store->set(FailureKey(membership_.role.host_rank()),
                           Bytes(absl::StrCat(static_cast<int>(outcome), "\n", message)));
  } catch (const std::exception&) {
    // The store (rank 0's process) is gone: the peers learn GANG_BROKEN.
  }
}

std::optional<GangPeerFailed> GangControl::PeerFailure() {
  const v1::GangRole& role = membership_.role;
  c10d::Store& store = *membership_.store;
  try {
    for (int rank = 0; rank < role.hosts(); ++rank) {
      if (rank == role.host_rank() || !store.check({FailureKey(rank)})) continue;
      const std::string text = Text(store.get(FailureKey(rank)));
      store.set(FailureReadKey(role.host_rank()), Bytes("1"));
      const size_t newline = text.find('\n');
      int outcome = v1::ERROR;
      if (newline == std::string::npos || !absl::SimpleAtoi(text.substr(0, newline), &outcome) ||
          !v1::Outcome_IsValid(outcome)) {
        outcome = v1::ERROR;
      }
      return GangPeerFailed(
          static_cast<v1::Outcome>(outcome),
          absl::StrCat(GangRankName(role, rank), " failed first: ",
                       newline == std::string::npos ? text : text.substr(newline + 1)));
    }
  } catch (const std::exception&) {
    // No store, no word from the peers: the gang broke, as far as we know.
  }
  return std::nullopt;
}

void GangControl::AwaitFailureRead(std::chrono::milliseconds timeout) {
  const v1::GangRole& role = membership_.role;
  std::vector<std::string> keys;
  for (int rank = 0; rank < role.hosts(); ++rank) {
    if (rank != role.host_rank()) keys.push_back(FailureReadKey(rank));
  }
  try {
    membership_.store->wait(keys, timeout);
  } catch (const std::exception&) {
    // A peer that never read it reports GANG_BROKEN; ours is stored either way.
  }
}

}  // namespace paradnn::runner
