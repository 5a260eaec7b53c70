#!/usr/bin/env python3
# paradnn's JAX runner (docs/backends.md): `paradnn-worker --backend jax`
# runs this file. The build copies it to build/bin/ with the interpreter
# chosen at configure time (PARADNN_JAX_PYTHON) on the first line, its
# package to build/python/paradnn_jax/ and the generated protobuf modules to
# build/python/paradnn/v1/. At run time $PARADNN_JAX_PYTHON, if set, names
# the interpreter to use instead (one with JAX installed): the script
# re-executes itself with it.
import os
import sys


def _setup():
    wanted = os.environ.get("PARADNN_JAX_PYTHON", "")
    if wanted and os.path.realpath(wanted) != os.path.realpath(sys.executable) and \
            not os.environ.get("PARADNN_JAX_REEXEC"):
        os.environ["PARADNN_JAX_REEXEC"] = "1"
        os.execv(wanted, [wanted, os.path.realpath(__file__)] + sys.argv[1:])
    here = os.path.dirname(os.path.realpath(__file__))
    # build/bin/ -> build/python/; installed: PREFIX/bin/ ->
    # PREFIX/lib/paradnn/python/; in the source tree the package sits beside
    # this file and the generated modules come from PYTHONPATH.
    prefix = os.path.dirname(here)
    for path in (here, os.path.join(prefix, "python"),
                 os.path.join(prefix, "lib", "paradnn", "python")):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.insert(0, path)


_setup()
from paradnn_jax.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
