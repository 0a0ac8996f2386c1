# SPDX-License-Identifier: Apache-2.0
"""The HTTP API, in-process, from the gabbi YAML files in gabbits/.

Each YAML file becomes one unittest test that runs its requests in order
against a freshly emptied database, so any test runner partitioning
(stestr workers) keeps a file's requests together. A failure lists every
failing request of the file.
"""

import os
import unittest

from gabbi import driver

from tests.server import fixtures

GABBITS = os.path.join(os.path.dirname(__file__), 'gabbits')
PREFIX = '/placement'


def _describe(problems):
    lines = []
    for test, trace in problems:
        lines.append('%s\n%s' % (test.id(), trace))
    return '\n\n'.join(lines)


class GabbiFile(unittest.TestCase):
    """All requests of one YAML file, as one test."""

    # Defaults let unittest's class discovery build (and drop) one.
    def __init__(self, method='test_requests', name='', suite=None):
        super().__init__(method)
        self._name = name
        self._suite = suite

    def id(self):
        return '%s.%s' % (__name__, self._name)

    def __str__(self):
        return self.id()

    def test_requests(self):
        result = unittest.TestResult()
        self._suite.run(result)
        problems = result.failures + result.errors + [
            (test, 'unexpected success')
            for test in result.unexpectedSuccesses]
        if problems:
            self.fail('%d of %d requests failed:\n%s' % (
                len(problems), result.testsRun, _describe(problems)))
        self.assertGreater(result.testsRun, 0)
        self.assertEqual([], result.skipped)


def _file_name(suite):
    first = next(iter(suite))
    # gabbi ids are "<module>.<file>_<request name>.test_request" and
    # request names may contain dots.
    return first.id()[len(__name__) + 1:].split('_', 1)[0]


def load_tests(loader, tests, pattern):
    gabbi_suite = driver.build_tests(
        GABBITS, loader, intercept=fixtures.intercept,
        fixture_module=fixtures, test_loader_name=__name__, prefix=PREFIX)
    files = unittest.TestSuite()
    for file_suite in gabbi_suite:
        files.addTest(GabbiFile(name=_file_name(file_suite),
                                suite=file_suite))
    return files
