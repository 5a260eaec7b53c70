#include "server/torchscript_archive.h"

#include <zip.h>

#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paradnn::server {
namespace {

constexpr char kHowToSave[] = "save the model with torch.jit.save (docs/models.md)";

absl::Status NotAnArchive(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("torchscript.content: not a TorchScript archive (", why, "); ", kHowToSave));
}

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};

}  // namespace

absl::Status CheckTorchScriptArchive(absl::string_view content, int64_t max_uncompressed_bytes) {
  // libzip reads the central directory and checks it against the local
  // headers (ZIP_CHECKCONS) without inflating anything.
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(content.data(), content.size(), 0, &error);
  if (source == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return NotAnArchive(why);
  }
  std::unique_ptr<zip_t, ZipCloser> archive(
      zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (archive == nullptr) {
    zip_source_free(source);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return NotAnArchive(absl::StrCat("not a readable zip file: ", why));
  }
  zip_error_fini(&error);
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  if (entries <= 0) return NotAnArchive("an empty zip file");
  if (entries > kMaxTorchScriptEntries) {
    return NotAnArchive(
        absl::StrCat(entries, " entries, more than the ", kMaxTorchScriptEntries, " allowed"));
  }
  std::string root;
  std::set<std::string> names;
  bool has_code = false;
  uint64_t inflated = 0;
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0 ||
        (stat.valid & (ZIP_STAT_NAME | ZIP_STAT_SIZE)) != (ZIP_STAT_NAME | ZIP_STAT_SIZE)) {
      return NotAnArchive(absl::StrCat("entry ", i, " cannot be read"));
    }
    const std::string name = stat.name;
    const size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0) {
      return NotAnArchive(absl::StrCat("'", name.substr(0, 80), "' is outside a top folder"));
    }
    if (root.empty()) root = name.substr(0, slash);
    if (name.compare(0, slash, root) != 0 || name.size() == slash) {
      return NotAnArchive(absl::StrCat("'", name.substr(0, 80), "' is outside the top folder '",
                                       root.substr(0, 80), "'"));
    }
    const std::string inside = name.substr(slash + 1);
    names.insert(inside);
    has_code = has_code || absl::StartsWith(inside, "code/");
    // Checked as it adds up, so that no sum can wrap.
    if (stat.size > static_cast<uint64_t>(max_uncompressed_bytes) ||
        inflated + stat.size > static_cast<uint64_t>(max_uncompressed_bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("torchscript.content: inflates to more than ", max_uncompressed_bytes,
                       " bytes (entry '", name.substr(0, 80), "' alone is ", stat.size,
                       " bytes); a model may hold at most --max-model-bytes once inflated"));
    }
    inflated += stat.size;
  }
  for (const char* required : {"data.pkl"}) {
    if (names.count(required) == 0) {
      return NotAnArchive(absl::StrCat("no ", root.substr(0, 80), "/", required));
    }
  }
  if (names.count("version") == 0 && names.count(".data/version") == 0) {
    return NotAnArchive(absl::StrCat("no ", root.substr(0, 80), "/version"));
  }
  if (!has_code) return NotAnArchive(absl::StrCat("no ", root.substr(0, 80), "/code/"));
  return absl::OkStatus();
}

}  // namespace paradnn::server
