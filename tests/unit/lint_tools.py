# SPDX-License-Identifier: Apache-2.0
"""The lint checks under tools/, which is not a package, as modules."""

import importlib.util
import os

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'tools')


def load(name):
    """tools/<name>.py as a module of its own."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(TOOLS, name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
