// "Did you mean ...?" for a mistyped subcommand or option: after CLI11
// refuses a command line, the closest known name (by edit distance) of what
// the user typed.
#ifndef PARADNN_CLIENT_DID_YOU_MEAN_H_
#define PARADNN_CLIENT_DID_YOU_MEAN_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace paradnn::client {

// The name in `names` closest to `typed` by Levenshtein distance, if it is
// within a third of typed's length (at least 1 edit, at most 3); else "".
// Ties go to the earlier name.
std::string ClosestName(const std::string& typed, const std::vector<std::string>& names);

// For a command line `args` (argv without the program name) that `app`
// refused: "did you mean 'status'?" for the first word that is neither a
// subcommand nor an option's value where a subcommand was expected, or
// "did you mean '--format'?" for the first unknown long option of the
// innermost subcommand the parse reached (its options and the global
// ones). "" when nothing close is known.
std::string DidYouMean(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace paradnn::client

#endif  // PARADNN_CLIENT_DID_YOU_MEAN_H_
