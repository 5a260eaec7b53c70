// Building gnuplot programs (quoting, inline data, terminals) and running
// them: the script goes into a private temporary folder (under $TMPDIR or
// /tmp, removed afterwards) and `gnuplot` from $PATH draws it, no shell in
// between. Pure functions except Run; thread-compatible.
#ifndef PARADNN_CLIENT_GNUPLOT_H_
#define PARADNN_CLIENT_GNUPLOT_H_

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paradnn::client::gnuplot {

enum class Terminal { kPng, kSvg };

struct Canvas {
  int width = 640;
  int height = 480;
};

// A gnuplot single-quoted string: no escape processing except '' for a
// quote, so backslashes and double quotes pass through as they are; line
// breaks and other control characters become spaces.
std::string Quote(absl::string_view text);
// Lines joined into one gnuplot string expression ('a' . "\n" . 'b').
std::string QuoteLines(const std::vector<std::string>& lines);
// A number as gnuplot reads it back exactly enough for drawing.
std::string Num(double value);
// Writes `name` as an inline datablock of numeric rows (NaN where not
// finite).
void Datablock(std::ostringstream& out, const std::string& name,
               const std::vector<std::vector<double>>& rows);
// Tic labels at index positions: ('a' 0, 'b' 1, ...).
std::string IndexTics(const std::vector<std::string>& labels);
// Terminal (pngcairo or svg, noenhanced, utf8), output file and grid.
void Prologue(std::ostringstream& out, Terminal terminal, Canvas canvas,
              const std::string& out_path);
// The whole figure is one centred message (nothing to draw).
void MessageFigure(std::ostringstream& out, const std::string& title, const std::string& message);
// Closes the output; returns the program.
std::string Finish(std::ostringstream& out);

// The terminal a --plot file names by its extension, .svg or .png in any
// case; InvalidArgument "--plot: cannot draw 'F': the file name must end in
// .png or .svg" otherwise.
absl::StatusOr<Terminal> PlotTerminal(const std::string& out_path);

// Runs `script` (which writes `out_path`). Unavailable when gnuplot is not
// installed; Internal with gnuplot's output when it fails or writes nothing.
absl::Status Run(const std::string& script, const std::string& out_path);

// Runs the script `script_for(path)` returns, `path` being `file_name` in
// the private folder, and returns the bytes drawn there. Errors as Run.
absl::StatusOr<std::string> Render(const std::function<std::string(const std::string&)>& script_for,
                                   const std::string& file_name);

}  // namespace paradnn::client::gnuplot

#endif  // PARADNN_CLIENT_GNUPLOT_H_
