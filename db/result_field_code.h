// The shown result fields (db/result_fields.h) as Python and JavaScript
// tables, for the Python package's result_frame and the dashboard's results
// table: checked-in files generated from the one table. Generated, not
// served by the coordinator: result_frame turns ResultRow messages into a
// DataFrame on the client side, for any coordinator's answer, and the
// dashboard is embedded in the coordinator it talks to, so both need the
// table at hand, not one more call. tests/unit/db/result_fields_test.cc
// fails while a checked-in copy differs; PARADNN_UPDATE_GENERATED=1 makes it
// rewrite them. Pure; thread-safe.
#ifndef PARADNN_DB_RESULT_FIELD_CODE_H_
#define PARADNN_DB_RESULT_FIELD_CODE_H_

#include <string>

namespace paradnn::db {

// The checked-in copies, relative to the source root.
inline constexpr const char* kPythonResultFieldsPath = "python/paradnn/result_fields.py";
inline constexpr const char* kDashboardResultFieldsPath = "dashboard/src/result_fields.js";

// A Python module defining SHOWN_FIELDS: one tuple per shown field, in
// order: (name, title, unit, when, path, predicted_path, multiply, divide),
// units and rules by ShownUnitName and ShownWhenName, "" for no path.
std::string ResultFieldsPython();

// A script defining kResultFields: one object per shown field, in order:
// {name, title, unit, when, path, predictedPath, multiply, divide,
// dashboard (shown in the dashboard's table)}.
std::string ResultFieldsJavaScript();

}  // namespace paradnn::db

#endif  // PARADNN_DB_RESULT_FIELD_CODE_H_
