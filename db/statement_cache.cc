#include "db/statement_cache.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "db/statement.h"

namespace paradnn::db::internal {
namespace {

thread_local StatementCache* current_cache = nullptr;

}  // namespace

std::string SqlSnippet(const char* sql) {
  if (sql == nullptr) return "";
  std::string text(absl::StripAsciiWhitespace(sql));
  constexpr size_t kMax = 80;
  if (text.size() > kMax) text = absl::StrCat(text.substr(0, kMax), "...");
  return text;
}

absl::Status PrepareOneStatement(sqlite3* db, const char* sql, unsigned int flags,
                                 sqlite3_stmt** out) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql, -1, flags, out, &tail);
  if (rc != SQLITE_OK) {
    return SqliteError(db, rc, absl::StrCat("prepare \"", SqlSnippet(sql), "\"").c_str());
  }
  // Statement runs exactly one statement; silently ignoring the rest of a
  // multi-statement string would drop writes.
  if (*out == nullptr || (tail != nullptr && !absl::StripAsciiWhitespace(tail).empty())) {
    sqlite3_finalize(*out);
    *out = nullptr;
    return absl::InvalidArgumentError(
        absl::StrCat("Statement takes exactly one SQL statement: \"", SqlSnippet(sql), "\""));
  }
  return absl::OkStatus();
}

StatementCache::~StatementCache() {
  for (auto& [sql, entry] : entries_) sqlite3_finalize(entry.stmt);
}

absl::StatusOr<StatementCache::Entry*> StatementCache::Acquire(const char* sql) {
  auto it = entries_.find(absl::string_view(sql));
  if (it != entries_.end()) {
    if (it->second.in_use) return nullptr;
    return &it->second;
  }
  sqlite3_stmt* stmt = nullptr;
  if (absl::Status s = PrepareOneStatement(db_, sql, SQLITE_PREPARE_PERSISTENT, &stmt); !s.ok()) {
    return s;
  }
  Entry& entry = entries_[sql];
  entry.stmt = stmt;
  return &entry;
}

StatementCache* CurrentStatementCache() { return current_cache; }

ScopedStatementCache::ScopedStatementCache(StatementCache* cache) : saved_(current_cache) {
  current_cache = cache;
}

ScopedStatementCache::~ScopedStatementCache() { current_cache = saved_; }

}  // namespace paradnn::db::internal
