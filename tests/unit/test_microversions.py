# SPDX-License-Identifier: Apache-2.0
"""The shared microversion vocabulary (osc_placement/microversions.py).

The client (osc_placement.version) and the server
(osc_placement.server.microversion) both read it, so they answer the same
microversions and name each behaviour alike; the client reads it without
loading the server.
"""

import ast
import subprocess
import sys

import testtools

from osc_placement import microversions
from osc_placement.server import microversion
from osc_placement import version


def is_version_tuple(node):
    """``(1, N)`` in source: a two-integer tuple literal of major version
    1, which is how a microversion is written as a tuple. Both sides'
    guards look for it."""
    return (isinstance(node, ast.Tuple) and len(node.elts) == 2
            and all(isinstance(elt, ast.Constant) and type(elt.value) is int
                    for elt in node.elts)
            and node.elts[0].value == 1)


def _minor(text):
    return int(text.split('.')[1])


class TestVocabulary(testtools.TestCase):

    def test_rows_are_oldest_first(self):
        minors = [_minor(feature.since)
                  for feature in microversions.FEATURES.values()]
        self.assertEqual(sorted(minors), minors)

    def test_every_microversion_up_to_the_maximum_has_a_row(self):
        self.assertEqual('1.39', microversions.MAX_VERSION)
        named = {feature.since for feature in microversions.FEATURES.values()}
        self.assertEqual({'1.%d' % minor for minor in range(40)}, named)

    def test_names_are_snake_case_words(self):
        wrong = [name for name in microversions.FEATURES
                 if not (name.isidentifier() and name == name.lower())]
        self.assertEqual([], wrong)

    def test_both_sides_answer_the_same_microversions(self):
        self.assertEqual(version.SUPPORTED_MICROVERSIONS,
                         tuple(map(str, microversion.KNOWN)))
        self.assertEqual(
            (version.MIN_VERSION, version.MAX_VERSION),
            (str(microversion.MIN_VERSION), str(microversion.MAX_VERSION)))

    def test_both_sides_name_each_behaviour_alike(self):
        for name, feature in microversions.FEATURES.items():
            self.assertEqual(feature.since, version.since(name))
            self.assertEqual(feature.since, str(microversion.SINCE[name]))

    def test_the_guards_see_version_tuples(self):
        found = [is_version_tuple(ast.parse(source, mode='eval').body)
                 for source in ('(1, 39)', '(1, 2, 10)', '(2, 1)', '(1, x)',
                                '("1", 2)')]
        self.assertEqual([True, False, False, False, False], found)


# Prints the modules of the server, and of the libraries only it needs,
# that importing the modules named in argv loaded.
_SERVER_MODULES_LOADED = (
    'import importlib, sys\n'
    'for name in sys.argv[1:]:\n'
    '    importlib.import_module(name)\n'
    'tops = ("osc_placement.server", "sqlalchemy", "webob")\n'
    'below = tuple(top + "." for top in tops)\n'
    'print(" ".join(sorted(name for name in sys.modules\n'
    '                      if name in tops or name.startswith(below))))\n')


def server_modules_loaded_by(*modules):
    """The server modules a fresh interpreter loads to import ``modules``."""
    done = subprocess.run(
        [sys.executable, '-c', _SERVER_MODULES_LOADED, *modules],
        capture_output=True, text=True, check=True)
    return done.stdout.split()


class TestClientReadsItAlone(testtools.TestCase):

    def test_the_client_loads_nothing_of_the_server(self):
        self.assertEqual([], server_modules_loaded_by(
            'osc_placement.version', 'osc_placement.microversions'))

    def test_the_check_sees_the_server(self):
        self.assertIn('osc_placement.server.microversion',
                      server_modules_loaded_by(
                          'osc_placement.server.microversion'))

    def test_the_vocabulary_imports_only_the_standard_library(self):
        with open(microversions.__file__) as source_file:
            tree = ast.parse(source_file.read())
        imported = [alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names]
        imported += [node.module for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)]
        self.assertEqual(
            [], [name for name in imported
                 if name.split('.')[0] not in sys.stdlib_module_names])
