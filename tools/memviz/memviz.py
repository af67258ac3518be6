#!/usr/bin/env python3
"""tools/memviz/memviz.py: the memory viewer as the source tree runs it.

The code lives in one place, bindings/python/stridemem/memviz.py, which ships
with the Python package (`python -m stridemem.memviz`) and is installed by
`cmake --install` as share/stridemem/memviz.py. This file runs that module
(`tools/memviz/memviz.py run.json -o run.html`) or, imported with
tools/memviz on sys.path (`import memviz`), is that module.
"""

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.realpath(__file__))
_CODE = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "bindings", "python",
                     "stridemem", "memviz.py")

# Loaded by path, not as stridemem.memviz: importing the package would load
# libstridemem, which drawing a snapshot does not need.
_spec = importlib.util.spec_from_file_location("memviz", _CODE)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

if __name__ == "__main__":
    sys.exit(_module.main())
sys.modules[__name__] = _module
