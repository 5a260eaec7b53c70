#include "worker/worker_id_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace paradnn::worker {
namespace {

// An id may hold any printable character; a file name may not hold '/'.
std::string LockFileName(std::string id) {
  std::replace(id.begin(), id.end(), '/', '_');
  return id + ".lock";
}

}  // namespace

absl::StatusOr<WorkerIdLock> WorkerIdLock::Take(const std::string& lock_dir,
                                                const std::string& base) {
  std::error_code error;
  std::filesystem::create_directories(lock_dir, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", lock_dir, " for worker id locks: ", error.message()));
  }
  for (int n = 1; n <= kMaxIdsPerBase; ++n) {
    std::string id = n == 1 ? base : absl::StrCat(base, "-", n);
    const std::string path = lock_dir + "/" + LockFileName(id);
    // O_CLOEXEC: a runner that outlives this worker must not keep its id.
    common::ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot open the worker id lock ", path, ": ", std::strerror(errno)));
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK || errno == EINTR) continue;  // a live worker has this id
      return absl::FailedPreconditionError(
          absl::StrCat("cannot lock the worker id lock ", path, ": ", std::strerror(errno)));
    }
    // Who holds it, for a person looking at the folder; the lock is what counts.
    const std::string pid = absl::StrCat(::getpid(), "\n");
    if (::ftruncate(fd.get(), 0) == 0) {
      [[maybe_unused]] const ssize_t written = ::pwrite(fd.get(), pid.data(), pid.size(), 0);
    }
    return WorkerIdLock(std::move(id), std::move(fd));
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("worker ids ", base, " to ", base, "-", kMaxIdsPerBase, " are all held by live ",
                   "workers on this host (locks in ", lock_dir, "); give this one a --worker-id"));
}

}  // namespace paradnn::worker
