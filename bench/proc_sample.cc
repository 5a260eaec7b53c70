#include "bench/proc_sample.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace paradnn::bench {

ProcSample ReadProc(pid_t pid) {
  ProcSample sample;
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) sample.rss_mb = std::stod(line.substr(6)) / 1024.0;  // kB
    if (line.rfind("RssAnon:", 0) == 0) sample.rss_anon_mb = std::stod(line.substr(8)) / 1024.0;
    if (line.rfind("RssFile:", 0) == 0) sample.rss_file_mb = std::stod(line.substr(8)) / 1024.0;
  }
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start at ") ".
  const size_t close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; fields >> field; ++i) {  // field 3 is the state
      if (i == 14) utime = std::stod(field);
      if (i == 15) {
        stime = std::stod(field);
        break;
      }
    }
    sample.cpu_seconds = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return sample;
}

double LoadAverage1() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

}  // namespace paradnn::bench
