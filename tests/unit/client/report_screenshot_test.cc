// The report as a browser shows it: a real page (gnuplot figures from the
// fixture analyses) rendered offline by headless Chromium. The screenshot
// must show every figure drawn, the rendered DOM must hold every figure as
// inline SVG, and the page may reference nothing outside itself.
//
// Each figure is found in the screenshot by rendering the same page twice:
// once as written and once with every <svg> emptied (same size, no
// content), so that the layout is identical and the pixels that differ are
// exactly what the figures draw. A figure that failed to render (blank, an
// unloaded external image, a figure the browser refused) differs from its
// empty twin in no pixel.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/analysis_report.h"
#include "tests/unit/client/analysis_plots_test_support.h"

extern char** environ;

namespace paradnn::client {
namespace {

using testing_support::Count;
using testing_support::EnvOverride;
using testing_support::FindOnPath;
using testing_support::FixtureReport;
using testing_support::ReadFile;
using testing_support::TempDirTest;

constexpr int kWindowWidth = 1280;
constexpr int kWindowHeight = 9000;  // taller than the page: every figure is in view
// Rows at the window's bottom that must be background: the page ended.
constexpr int kBottomMargin = 300;
constexpr int kChromiumTimeoutSeconds = 30;

// The page with every <svg> element's content dropped: the element (and so
// the layout) stays, its drawing goes.
std::string WithEmptyFigures(const std::string& html) {
  std::string out;
  size_t at = 0;
  for (size_t open = html.find("<svg", at); open != std::string::npos;
       open = html.find("<svg", at)) {
    const size_t open_end = html.find('>', open);
    const size_t close = html.find("</svg>", open_end);
    if (open_end == std::string::npos || close == std::string::npos) break;
    out.append(html, at, open_end + 1 - at);
    at = close;
  }
  out.append(html, at);
  return out;
}

// Runs `argv` under timeout(1) with stdout and stderr into `log_path`;
// returns the pid.
pid_t Start(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<std::string> full = {"timeout", "--kill-after=5",
                                   std::to_string(kChromiumTimeoutSeconds)};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> args;
  for (auto& arg : full) args.push_back(arg.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

int Wait(pid_t pid) {
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- A minimal PNG reader: 8-bit RGB or RGBA, not interlaced ---------------

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3

  const uint8_t* At(int x, int y) const { return &rgb[(static_cast<size_t>(y) * width + x) * 3]; }
};

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a);
  const int pb = std::abs(p - b);
  const int pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Undoes the per-row filters of `raw` (each row: its filter byte, then
// `stride` bytes) into `pixels`; false on an unknown filter.
bool Unfilter(const std::vector<uint8_t>& raw, size_t stride, int channels, int height,
              std::vector<uint8_t>* pixels) {
  pixels->assign(stride * height, 0);
  const size_t step = static_cast<size_t>(channels);
  for (int y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &(*pixels)[y * stride];
    const uint8_t* above = y > 0 ? row - stride : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= step ? row[i - step] : 0;
      const int b = above != nullptr ? above[i] : 0;
      const int c = above != nullptr && i >= step ? above[i - step] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4:
          predictor = Paeth(a, b, c);
          break;
        default:
          return false;
      }
      row[i] = static_cast<uint8_t>(in[i] + predictor);
    }
  }
  return true;
}

// Returns the image, or the reason it is not a PNG this reader decodes.
std::pair<std::optional<Image>, std::string> DecodePng(const std::string& bytes) {
  if (bytes.size() < 8 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    return {std::nullopt, "no PNG signature"};
  }
  Image image;
  int channels = 0;
  std::string compressed;
  bool ended = false;
  for (size_t at = 8; at + 12 <= bytes.size() && !ended;) {
    const uint32_t length = BigEndian32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) return {std::nullopt, "truncated chunk " + type};
    const std::string data = bytes.substr(at + 8, length);
    const uLong crc = crc32(crc32(0, nullptr, 0),
                            reinterpret_cast<const Bytef*>(bytes.data() + at + 4), length + 4);
    if (crc != BigEndian32(bytes, at + 8 + length)) return {std::nullopt, "bad CRC in " + type};
    if (type == "IHDR") {
      if (length != 13) return {std::nullopt, "bad IHDR"};
      image.width = static_cast<int>(BigEndian32(data, 0));
      image.height = static_cast<int>(BigEndian32(data, 4));
      const int depth = static_cast<uint8_t>(data[8]);
      const int color = static_cast<uint8_t>(data[9]);
      const int interlace = static_cast<uint8_t>(data[12]);
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
        return {std::nullopt, absl::StrCat("unsupported PNG: depth ", depth, " color type ", color,
                                           " interlace ", interlace)};
      }
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed += data;
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + length;
  }
  if (channels == 0 || !ended || image.width <= 0 || image.height <= 0 || image.width > 1 << 15 ||
      image.height > 1 << 15) {
    return {std::nullopt, "no IHDR or IEND, or a size out of range"};
  }
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    return {std::nullopt, "IDAT does not inflate to the image's size"};
  }
  std::vector<uint8_t> pixels;
  if (!Unfilter(raw, stride, channels, image.height, &pixels)) {
    return {std::nullopt, "unknown row filter"};
  }
  const size_t count = static_cast<size_t>(image.width) * image.height;
  image.rgb.resize(count * 3);
  for (size_t p = 0; p < count; ++p) {
    for (int k = 0; k < 3; ++k) image.rgb[p * 3 + k] = pixels[p * channels + k];
  }
  return {std::move(image), ""};
}

bool Differ(const uint8_t* a, const uint8_t* b) {
  return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]) > 24;
}

bool IsBackground(const uint8_t* p) { return p[0] > 245 && p[1] > 245 && p[2] > 245; }

// A band of screenshot rows where the page differs from its empty-figure
// twin: one figure.
struct Band {
  int top = 0;
  int bottom = 0;      // exclusive
  size_t pixels = 0;   // differing pixels in the band
  int left = 1 << 30;  // horizontal extent of the differing pixels
  int right = 0;
};

// Rows with differing pixels, merged into bands across gaps of at most
// `max_gap` rows (a figure's own blank rows; figures are further apart, a
// table and a heading between them).
std::vector<Band> DifferingBands(const Image& drawn, const Image& empty, int max_gap) {
  std::vector<Band> bands;
  int last_row = -(1 << 30);
  for (int y = 0; y < drawn.height; ++y) {
    size_t count = 0;
    int left = drawn.width;
    int right = -1;
    for (int x = 0; x < drawn.width; ++x) {
      if (Differ(drawn.At(x, y), empty.At(x, y))) {
        ++count;
        left = std::min(left, x);
        right = std::max(right, x);
      }
    }
    if (count == 0) continue;
    if (y - last_row > max_gap + 1) bands.push_back(Band{y, y + 1});
    Band& band = bands.back();
    band.bottom = y + 1;
    band.pixels += count;
    band.left = std::min(band.left, left);
    band.right = std::max(band.right, right + 1);
    last_row = y;
  }
  return bands;
}

// Every place the page names something outside itself; empty when none.
// XML namespace names (xmlns="http://www.w3.org/2000/svg") are identifiers,
// never fetched, and allowed.
std::vector<std::string> ExternalReferences(const std::string& html) {
  std::string lower = html;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> found;
  auto context = [&](size_t at) { return html.substr(at > 40 ? at - 40 : 0, 100); };
  for (const char* scheme : {"http:", "https:", "file:", "ftp:"}) {
    for (size_t at = lower.find(scheme); at != std::string::npos; at = lower.find(scheme, at + 1)) {
      // Allowed only as the value of an xmlns or xmlns:NAME attribute.
      size_t start = at;
      if (start > 0 && (lower[start - 1] == '"' || lower[start - 1] == '\'')) --start;
      if (start > 0 && lower[start - 1] == '=') {
        --start;
        while (start > 0 && (std::isalnum(static_cast<unsigned char>(lower[start - 1])) ||
                             lower[start - 1] == ':')) {
          --start;
        }
        if (lower.compare(start, 5, "xmlns") == 0) continue;
      }
      found.push_back(context(at));
    }
  }
  for (const char* attribute :
       {"src=", "<link", "<script", "@import", "<iframe", "<object", "<embed", "<img"}) {
    for (size_t at = lower.find(attribute); at != std::string::npos;
         at = lower.find(attribute, at + 1)) {
      found.push_back(context(at));
    }
  }
  for (const char* attribute : {"href=\"", "href='", "url("}) {
    const size_t length = std::string(attribute).size();
    for (size_t at = lower.find(attribute); at != std::string::npos;
         at = lower.find(attribute, at + 1)) {
      if (at + length >= lower.size() || lower[at + length] != '#') {
        found.push_back(context(at));
      }
    }
  }
  return found;
}

// The rendered DOM holds every section, and every figure as one inline SVG
// with a drawing in it.
void ExpectEveryFigureInDom(const std::string& dom, const ReportInput& input) {
  size_t figure_count = 0;
  for (size_t at = dom.find("<figure>"); at != std::string::npos;
       at = dom.find("<figure>", at + 1)) {
    const size_t end = dom.find("</figure>", at);
    ASSERT_NE(end, std::string::npos);
    const std::string figure = dom.substr(at, end - at);
    ++figure_count;
    EXPECT_EQ(Count(figure, "<svg"), 1u) << "figure " << figure_count;
    const size_t shapes = Count(figure, "<path") + Count(figure, "<text") + Count(figure, "<rect") +
                          Count(figure, "<polygon") + Count(figure, "<circle") +
                          Count(figure, "<use");
    EXPECT_GE(shapes, 20u) << "figure " << figure_count << " has almost nothing drawn";
  }
  EXPECT_EQ(figure_count, input.sections.size());
  for (const auto& section : input.sections) {
    EXPECT_NE(dom.find(absl::StrCat("<h2>", section.title, "</h2>")), std::string::npos)
        << section.title;
  }
}

// The screenshots of the page (`drawn`) and of its empty-figure twin show
// the whole page, its text, and one band of drawing per figure, in order,
// each a figure-sized area with a real share of its pixels drawn.
void ExpectEveryFigureDrawn(const Image& drawn, const Image& empty, const ReportInput& input) {
  ASSERT_EQ(drawn.width, kWindowWidth);
  ASSERT_EQ(drawn.height, kWindowHeight);
  ASSERT_EQ(empty.width, drawn.width);
  ASSERT_EQ(empty.height, drawn.height);
  size_t empty_ink = 0;
  for (int y = 0; y < empty.height; ++y) {
    for (int x = 0; x < empty.width; ++x) empty_ink += IsBackground(empty.At(x, y)) ? 0 : 1;
  }
  EXPECT_GT(empty_ink, 10000u) << "the page's text did not render";
  for (int y = drawn.height - kBottomMargin; y < drawn.height; ++y) {
    for (int x = 0; x < drawn.width; ++x) {
      ASSERT_TRUE(IsBackground(drawn.At(x, y)))
          << "the page is taller than the window; raise kWindowHeight";
    }
  }
  const std::vector<Band> bands = DifferingBands(drawn, empty, 40);
  ASSERT_EQ(bands.size(), input.sections.size()) << "figures drawn in the screenshot";
  for (size_t i = 0; i < bands.size(); ++i) {
    const Band& band = bands[i];
    const int height = band.bottom - band.top;
    const int width = band.right - band.left;
    const double share = static_cast<double>(band.pixels) / (static_cast<double>(height) * width);
    SCOPED_TRACE(absl::StrCat(input.sections[i].title, ": rows ", band.top, "-", band.bottom,
                              ", columns ", band.left, "-", band.right, ", ", band.pixels,
                              " pixels drawn (", share * 100, " %)"));
    // The fixtures' figures are 470-870 rows tall, 1100-1170 columns wide,
    // with 21,000-300,000 pixels drawn (2.5-50 %); a figure with only its
    // title and axis labels would draw a few thousand.
    EXPECT_GE(height, 200);
    EXPECT_GE(width, 300);
    EXPECT_GE(band.pixels, 10000u);
    EXPECT_GE(share, 0.01);
  }
}

class ReportScreenshotTest : public TempDirTest {
 protected:
  // Renders DIR/NAME/index.html into DIR/NAME.png (stdout and stderr, with
  // the DOM when `extra` asks for it, into DIR/NAME.log); returns the pid.
  pid_t StartChromium(const std::string& chromium, const std::string& name,
                      const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {
        chromium,
        "--headless",
        "--no-sandbox",  // as root, as in containers and CI
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--user-data-dir=" + Path(name + "-profile"),
        absl::StrCat("--window-size=", kWindowWidth, ",", kWindowHeight),
        "--screenshot=" + Path(name + ".png")};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("file://" + Path(name + "/index.html"));
    return Start(args, Path(name + ".log"));
  }
};

TEST_F(ReportScreenshotTest, RendersEveryFigureOfflineInChromium) {
  const std::optional<std::string> chromium = FindOnPath("chromium");
  ASSERT_TRUE(chromium.has_value())
      << "chromium is not installed (the report's browser test needs it): run "
         "scripts/install-deps.sh";
  ASSERT_TRUE(FindOnPath("gnuplot").has_value())
      << "gnuplot is not installed (the report's figures need it): run scripts/install-deps.sh";

  const ReportInput input = FixtureReport();
  std::filesystem::create_directory(Path("tmp"));
  {
    EnvOverride tmpdir("TMPDIR", Path("tmp"));
    const absl::Status status = WriteReport(input, Path("drawn"));
    ASSERT_TRUE(status.ok()) << status;
  }
  const std::string html = ReadFile(Path("drawn/index.html"));
  ASSERT_EQ(Count(html, "<svg"), input.sections.size());

  // The page names nothing outside itself.
  const std::vector<std::string> external = ExternalReferences(html);
  EXPECT_TRUE(external.empty()) << "external references:\n" << absl::StrJoin(external, "\n---\n");

  std::filesystem::create_directory(Path("empty"));
  {
    std::ofstream out(Path("empty/index.html"), std::ios::binary);
    out << WithEmptyFigures(html);
  }
  // Both renderings run side by side, each with its own profile; the page
  // with figures also dumps its DOM.
  const pid_t drawn_pid = StartChromium(*chromium, "drawn", {"--dump-dom"});
  const pid_t empty_pid = StartChromium(*chromium, "empty", {});
  const int drawn_exit = Wait(drawn_pid);
  const int empty_exit = Wait(empty_pid);
  ASSERT_EQ(drawn_exit, 0) << "chromium: " << ReadFile(Path("drawn.log"));
  ASSERT_EQ(empty_exit, 0) << "chromium: " << ReadFile(Path("empty.log"));

  ExpectEveryFigureInDom(ReadFile(Path("drawn.log")), input);
  auto [drawn, drawn_error] = DecodePng(ReadFile(Path("drawn.png")));
  auto [empty, empty_error] = DecodePng(ReadFile(Path("empty.png")));
  ASSERT_TRUE(drawn.has_value()) << "drawn.png: " << drawn_error;
  ASSERT_TRUE(empty.has_value()) << "empty.png: " << empty_error;
  ExpectEveryFigureDrawn(*drawn, *empty, input);
}

}  // namespace
}  // namespace paradnn::client
