#include "client/gnuplot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/subprocess.h"

extern char** environ;

namespace paradnn::client::gnuplot {
namespace {

// The gnuplot executable on $PATH, or "" when there is none.
std::string FindGnuplot() {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(dirs, ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = absl::StrCat(dir, "/gnuplot");
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

absl::StatusOr<std::string> MakeTempDir() {
  std::string base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') base = tmp;
  std::string pattern = base + "/paradnn-plot-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    const int error = errno;
    return absl::InternalError(
        absl::StrCat("cannot create a temporary directory in ", base, ": ", std::strerror(error)));
  }
  return pattern;
}

// Removes a directory tree when it goes out of scope.
class TempDir {
 public:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs `gnuplot script` with stdin from /dev/null and stdout and stderr into
// `log`; returns its exit status (128 + the signal when one killed it).
absl::StatusOr<int> RunGnuplot(const std::string& gnuplot, const std::string& script,
                               const std::string& log) {
  absl::StatusOr<common::ScopedFd> null = common::OpenForChild("/dev/null", O_RDONLY);
  if (!null.ok()) return null.status();
  absl::StatusOr<common::ScopedFd> out = common::OpenForChild(log, O_WRONLY | O_CREAT | O_TRUNC);
  if (!out.ok()) return out.status();
  common::SpawnOptions options;
  options.stdin_fd = null->get();
  options.stdout_fd = out->get();
  options.stderr_fd = out->get();
  absl::StatusOr<common::SpawnedChild> child = common::SpawnChild({gnuplot, script}, options);
  if (!child.ok()) return absl::InternalError(child.status().message());
  int status = 0;
  while (waitpid(child->pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(absl::StrCat("waiting for gnuplot: ", std::strerror(errno)));
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

std::string Quote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string QuoteLines(const std::vector<std::string>& lines) {
  std::vector<std::string> quoted;
  quoted.reserve(lines.size());
  for (const auto& line : lines) quoted.push_back(Quote(line));
  return absl::StrJoin(quoted, " . \"\\n\" . ");
}

std::string Num(double value) { return absl::StrFormat("%.10g", value); }

void Datablock(std::ostringstream& out, const std::string& name,
               const std::vector<std::vector<double>>& rows) {
  out << "$" << name << " << EOD\n";
  for (const auto& row : rows) {
    std::vector<std::string> fields;
    fields.reserve(row.size());
    for (double value : row) fields.push_back(std::isfinite(value) ? Num(value) : "NaN");
    out << absl::StrJoin(fields, " ") << "\n";
  }
  out << "EOD\n";
}

std::string IndexTics(const std::vector<std::string>& labels) {
  std::vector<std::string> tics;
  tics.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) tics.push_back(absl::StrCat(Quote(labels[i]), " ", i));
  return absl::StrCat("(", absl::StrJoin(tics, ", "), ")");
}

void Prologue(std::ostringstream& out, Terminal terminal, Canvas canvas,
              const std::string& out_path) {
  out << "# paradnn analysis figure (client/analysis_plots.cc)\n";
  out << "set encoding utf8\n";
  if (terminal == Terminal::kSvg) {
    out << "set terminal svg size " << canvas.width << "," << canvas.height
        << " noenhanced dynamic font 'sans,10' background rgb 'white'\n";
  } else {
    out << "set terminal pngcairo size " << canvas.width << "," << canvas.height
        << " noenhanced font ',10'\n";
  }
  out << "set output " << Quote(out_path) << "\n";
  out << "set grid back lc rgb '#dddddd'\n";
}

void MessageFigure(std::ostringstream& out, const std::string& title, const std::string& message) {
  out << "unset border\nunset tics\nunset key\nunset grid\n";
  if (!title.empty()) out << "set title " << Quote(title) << "\n";
  out << "set xrange [0:1]\nset yrange [0:1]\n";
  out << "set label 1 " << Quote(message) << " at graph 0.5, graph 0.5 center\n";
  out << "plot NaN notitle\n";
}

std::string Finish(std::ostringstream& out) {
  out << "unset output\n";
  return out.str();
}

namespace {

// Writes `script` into `dir`, runs gnuplot on it and checks that it wrote a
// non-empty `out_path`.
absl::Status RunIn(const TempDir& dir, const std::string& script_text,
                   const std::string& out_path) {
  const std::string gnuplot = FindGnuplot();
  if (gnuplot.empty()) {
    return absl::UnavailableError("gnuplot not found: install Debian package gnuplot-nox");
  }
  const std::string script_path = dir.path() + "/figure.gp";
  const std::string log_path = dir.path() + "/gnuplot.log";
  {
    std::ofstream script(script_path, std::ios::binary);
    script << script_text;
    script.close();
    if (!script) {
      return absl::InternalError(absl::StrCat("cannot write the gnuplot script ", script_path));
    }
  }
  absl::StatusOr<int> exit_status = RunGnuplot(gnuplot, script_path, log_path);
  if (!exit_status.ok()) return exit_status.status();
  const std::string log = std::string(absl::StripTrailingAsciiWhitespace(ReadFile(log_path)));
  if (*exit_status != 0) {
    return absl::InternalError(absl::StrCat("gnuplot failed (exit status ", *exit_status,
                                            ") drawing ", out_path, ": ", log));
  }
  std::error_code error;
  const auto size = std::filesystem::file_size(out_path, error);
  if (error || size == 0) {
    return absl::InternalError(
        absl::StrCat("gnuplot wrote no figure to ", out_path, log.empty() ? "" : ": ", log));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Terminal> PlotTerminal(const std::string& out_path) {
  const std::string extension =
      absl::AsciiStrToLower(std::filesystem::path(out_path).extension().string());
  if (extension == ".svg") return Terminal::kSvg;
  if (extension == ".png") return Terminal::kPng;
  return absl::InvalidArgumentError(
      absl::StrCat("--plot: cannot draw '", out_path, "': the file name must end in .png or .svg"));
}

absl::Status Run(const std::string& script, const std::string& out_path) {
  absl::StatusOr<std::string> dir = MakeTempDir();
  if (!dir.ok()) return dir.status();
  TempDir temp(*dir);
  return RunIn(temp, script, out_path);
}

absl::StatusOr<std::string> Render(const std::function<std::string(const std::string&)>& script_for,
                                   const std::string& file_name) {
  absl::StatusOr<std::string> dir = MakeTempDir();
  if (!dir.ok()) return dir.status();
  TempDir temp(*dir);
  const std::string out_path = temp.path() + "/" + file_name;
  if (absl::Status s = RunIn(temp, script_for(out_path), out_path); !s.ok()) return s;
  return ReadFile(out_path);
}

}  // namespace paradnn::client::gnuplot
