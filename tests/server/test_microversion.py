# SPDX-License-Identifier: Apache-2.0
"""The microversion table and the header parsing (server/microversion.py)."""

import testtools

from osc_placement.server import errors
from osc_placement.server import microversion


class TestMicroversion(testtools.TestCase):

    def test_default_is_minimum(self):
        self.assertEqual((1, 0), microversion.parse(None))
        self.assertEqual((1, 0), microversion.parse('compute 2.1'))

    def test_latest(self):
        self.assertEqual((1, 39), microversion.parse('placement latest'))

    def test_comparable_tuple(self):
        version = microversion.parse('placement 1.25')
        self.assertTrue(version >= (1, 25))
        self.assertTrue(version < (1, 26))
        self.assertEqual('1.25', str(version))
        self.assertTrue(version.supports('error_codes'))
        self.assertFalse(version.supports('reserved_eq_total'))

    def test_bad_and_unacceptable(self):
        self.assertRaises(errors.BadRequest, microversion.parse,
                          'placement 1.x')
        err = self.assertRaises(errors.NotAcceptable, microversion.parse,
                                'placement 1.40')
        self.assertEqual({'max_version': '1.39', 'min_version': '1.0'},
                         err.extra)

    def test_table_is_contiguous(self):
        minors = [version.minor for version in microversion.KNOWN]
        self.assertEqual(list(range(40)), minors)
