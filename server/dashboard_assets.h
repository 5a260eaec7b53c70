// The dashboard's files (dashboard/src and the Vega builds npm installed in
// dashboard/node_modules), embedded into the coordinator at build time
// (server/CMakeLists.txt), so the page works with no network and no files
// beside the binary.
#ifndef PARADNN_SERVER_DASHBOARD_ASSETS_H_
#define PARADNN_SERVER_DASHBOARD_ASSETS_H_

#include <string_view>

namespace paradnn::server {

struct DashboardAsset {
  std::string_view name;  // as served under /assets/ ("index.html" is /)
  std::string_view content_type;
  std::string_view body;
};

// The asset called `name`; nullptr if there is none.
const DashboardAsset* FindDashboardAsset(std::string_view name);

}  // namespace paradnn::server

#endif  // PARADNN_SERVER_DASHBOARD_ASSETS_H_
