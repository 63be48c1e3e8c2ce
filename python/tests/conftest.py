"""pytest setup: the library under test is $PHYSID_LIBRARY (the CTest test python/pytest sets it to the build
tree's libphysid.so, and PHYSID_CLI to its physid), the package this source tree's python/physid, the files
relative to the repository root ($PHYSID_ROOT, default two levels up)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
ROOT = os.environ.get("PHYSID_ROOT", os.path.dirname(os.path.dirname(HERE)))


@pytest.fixture
def root():
    return ROOT


def path(*parts):
    """A file of the repository."""
    return os.path.join(ROOT, *parts)
