// What the sweep fuzzers check on each input, shared by the libFuzzer
// entry points (sweep_file_fuzzer.cc, sweep_spec_fuzzer.cc, built with
// -DPARADNN_FUZZ=ON and clang) and the corpus replay test that the regular
// build runs (corpus_replay_test.cc).
//
// Each function runs one input through the code a hostile client reaches and
// returns OK when every contract held, else Internal naming the broken
// contract (the fuzzer aborts on it, the replay test fails). A crash, a
// sanitizer report or a hang is of course also a failure. Thread-compatible.
#ifndef PARADNN_TESTS_FUZZ_SWEEP_FUZZ_CHECKS_H_
#define PARADNN_TESTS_FUZZ_SWEEP_FUZZ_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paradnn::fuzz {

// The job cap the checks run with: small, so that an accepted input expands
// quickly, yet larger than any preset's sweep.
inline constexpr int64_t kFuzzMaxJobs = 4096;

// Longest error message a bad input may provoke: errors echo user text
// quoted and bounded, never whole keys or values.
inline constexpr size_t kMaxErrorBytes = 1024;

// `bytes` as a sweep file: client::ParseSweepText must return OK or
// InvalidArgument ("fuzz.yaml:..." naming where, at most kMaxErrorBytes).
// An accepted spec must also be accepted by the coordinator: it survives a
// protobuf round trip (what SubmitSweep receives), and CheckPlannedSweep holds
// for it.
absl::Status CheckSweepFile(absl::string_view bytes);

// `bytes` as a serialized v1::SweepSpec, as SubmitSweep receives it from any
// client: when it parses, common::ValidateSweep returns OK or a bounded
// InvalidArgument, and an accepted spec passes CheckPlannedSweep.
absl::Status CheckSweepSpec(absl::string_view bytes);

// What a libFuzzer entry point does with a check's `status`: returns when it
// is OK, else prints the broken contract to stderr and aborts, which
// libFuzzer reports as a crash and keeps the input of.
void AbortOnBrokenContract(const absl::Status& status);

}  // namespace paradnn::fuzz

#endif  // PARADNN_TESTS_FUZZ_SWEEP_FUZZ_CHECKS_H_
