// The runner ignores SIGPIPE (runner_main.cc): a Gloo rank that writes to a
// peer whose group has closed gets EPIPE, an error it reports, not a signal
// that kills it. The in-process ranks of libtorch_tests (gradient buckets, a
// gang rank's failure) need the same, or a rank that stops takes the whole
// test binary with it (seen as a SIGPIPE "exception" of gradient_buckets_test
// under load).
#include "common/subprocess.h"

namespace {

[[maybe_unused]] const bool kSigpipeIgnored = [] {
  paradnn::common::IgnoreSigpipe();
  return true;
}();

}  // namespace
