"""The build's compile commands (compile_commands.json), one entry per
project source file. A unity build (CMakeLists.txt, PARADNN_UNITY) lists its
generated units instead, each including several sources: such an entry
becomes one entry per included source, with the unit's command and the
source in the unit's place."""
import json
import os
import re

_UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)


def is_unity_unit(path):
    """CMake names its units <target>.dir/Unity/unity_<N>_cxx.cxx."""
    return os.sep + "Unity" + os.sep + "unity_" in path


def source_entries(build_dir):
    """[{"directory", "file", "command"}] with "file" an absolute source path."""
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    result = []
    for entry in entries:
        unit = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if not is_unity_unit(unit):
            result.append(dict(entry, file=unit))
            continue
        with open(unit, encoding="utf-8") as f:
            sources = _UNITY_INCLUDE.findall(f.read())
        for source in sources:
            one = dict(entry, file=os.path.normpath(source))
            if "command" in entry:
                one["command"] = entry["command"].replace(entry["file"], source)
            if "arguments" in entry:
                one["arguments"] = [source if a == entry["file"] else a for a in entry["arguments"]]
            result.append(one)
    return result
