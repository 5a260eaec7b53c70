// A coordinator and workers as real processes on loopback, for integration
// and fault tests, plus a read-only look into the SQLite file they write.
#ifndef PARADNN_TESTS_INTEGRATION_CLUSTER_H_
#define PARADNN_TESTS_INTEGRATION_CLUSTER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "paradnn/v1/metrics.pb.h"
#include "tests/integration/test_processes.h"

namespace paradnn::testing {

// Runs one integer-valued query against the database file (read-only).
int64_t QueryInt(const std::string& db_path, const std::string& sql);
// The same without expectations, for polling a file that another process may
// still be creating: nullopt while the file, its schema or the row is missing.
std::optional<int64_t> TryQueryInt(const std::string& db_path, const std::string& sql);
// The first column of the first row as text ("" for none or NULL).
std::string QueryText(const std::string& db_path, const std::string& sql);
// Every row of `sql`, which selects an integer (a sweep or result id) and a
// Measurement blob (results.measurement), with the blob parsed.
std::vector<std::pair<int64_t, v1::Measurement>> QueryMeasurements(const std::string& db_path,
                                                                   const std::string& sql);

class Cluster {
 public:
  explicit Cluster(const TempDir& dir) : dir_(dir), db_path_(dir.File("sweeps.db")) {}

  // Starts paradnn-coordinator on 127.0.0.1:0 and waits for its address;
  // extra flags are appended.
  void StartCoordinator(const std::vector<std::string>& extra = {});
  // SIGKILLs the coordinator (no clean shutdown).
  void KillCoordinator();
  // SIGTERMs the coordinator and waits for it: its wait status, or nullopt
  // when it did not exit within `timeout` (then it is SIGKILLed).
  std::optional<int> TerminateCoordinator(std::chrono::seconds timeout);
  // Every coordinator log of this cluster so far, one start after another.
  std::string CoordinatorLogs() const;
  // Starts a paradnn-worker with `id`; extra flags are appended.
  void StartWorker(const std::string& id, const std::vector<std::string>& extra = {});
  // SIGKILLs worker `index` (in start order).
  void KillWorker(size_t index);
  // Waits for worker `index` to exit on its own: its wait status, or nullopt
  // after `timeout`. Stop() then takes that exit as expected.
  std::optional<int> WaitWorker(size_t index, std::chrono::seconds timeout);
  std::string WorkerLog(size_t index);
  // Sends `signal_number` to worker `index` (SIGSTOP/SIGCONT: a host that
  // stops answering without closing its connection, then comes back).
  void SignalWorker(size_t index, int signal_number);
  // Runs the CLI against this coordinator.
  CommandResult Cli(std::vector<std::string> args,
                    std::chrono::seconds timeout = std::chrono::seconds(60));
  // Submits the sweep file `path` (`submit PATH -q`, then `extra`), sets
  // `*sweep_id` and watches the sweep until it ends (at most `timeout`),
  // keeping what watch said in `*watched` where that is given. Either
  // command failing is a fatal failure, with the output and logs: call it
  // inside ASSERT_NO_FATAL_FAILURE.
  void SubmitAndWatch(const std::string& path, std::chrono::seconds timeout, std::string* sweep_id,
                      const std::vector<std::string>& extra = {}, CommandResult* watched = nullptr);
  // Writes `text` to the sweep file `name` in the cluster's folder, submits
  // it, and expects it refused as bad input: exit status 2 and `words` (the
  // field at fault) on stderr.
  void ExpectSubmitRefused(const std::string& name, const std::string& text,
                           const std::string& words);
  // SIGTERMs the workers, then the coordinator, expecting clean exits.
  void Stop();
  std::string Logs();

  const std::string& db_path() const { return db_path_; }
  const std::string& address() const { return address_; }

 private:
  const TempDir& dir_;
  std::string db_path_;
  std::string address_;
  int coordinator_starts_ = 0;
  std::unique_ptr<ChildProcess> coordinator_;
  std::vector<std::unique_ptr<ChildProcess>> workers_;
  std::vector<bool> exit_expected_;
};

}  // namespace paradnn::testing

#endif  // PARADNN_TESTS_INTEGRATION_CLUSTER_H_
