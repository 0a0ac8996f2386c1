# SPDX-License-Identifier: Apache-2.0
"""The parts of db/libpq.py that need no database: the driver's query
text turned into libpq's, and parameters into PostgreSQL's text forms
(their round trip through a real PostgreSQL is tests/server/
test_libpq.py's)."""

import datetime
import decimal

from psycopg import errors
import testtools

from osc_placement.server.db import libpq


class TestConverted(testtools.TestCase):

    def test_names_numbered_in_order_of_first_use(self):
        query, names = libpq._converted(
            'SELECT %(b)s::INTEGER, %(a)s::TEXT WHERE x = %(b)s::INTEGER')
        self.assertEqual(
            b'SELECT $1::INTEGER, $2::TEXT WHERE x = $1::INTEGER', query)
        self.assertEqual(('b', 'a'), names)

    def test_a_doubled_percent_is_one(self):
        query, names = libpq._converted(
            "SELECT 'a%%b' LIKE %(pattern)s::TEXT")
        self.assertEqual(b"SELECT 'a%b' LIKE $1::TEXT", query)
        self.assertEqual(('pattern',), names)

    def test_no_parameters(self):
        self.assertEqual((b'SELECT 1', ()), libpq._converted('SELECT 1'))


class TestTextValue(testtools.TestCase):

    def test_scalars(self):
        moment = datetime.datetime(2026, 12, 6, 5, 30, 1, 250)
        self.assertEqual(
            [None, b'caf\xc3\xa9', b'true', b'false', b'-12', b'0.5',
             b'1.10', b'2026-12-06 05:30:01.000250'],
            [libpq._text_value(v) for v in (
                None, 'café', True, False, -12, 0.5,
                decimal.Decimal('1.10'), moment)])

    def test_whole_numbers_have_no_fraction(self):
        """An integer column takes ``1`` but not ``1.0``; JSON's 1.0 is
        an integer to the API's schemas."""
        self.assertEqual(
            [b'1', b'2', b'{1,2,0.5}', b'inf'],
            [libpq._text_value(v) for v in (
                1.0, decimal.Decimal('2.00'), [1.0, 2, 0.5],
                float('inf'))])

    def test_arrays_keep_awkward_strings_and_nulls(self):
        self.assertEqual(
            b'{1,NULL,"a,b","q\\"r","s\\\\t","NULL","{}"}',
            libpq._text_value([1, None, 'a,b', 'q"r', 's\\t', 'NULL',
                               '{}']))
        self.assertEqual(b'{}', libpq._text_value([]))

    def test_what_has_no_faithful_text_is_refused(self):
        self.assertRaises(TypeError, libpq._text_value, object())
        self.assertRaises(TypeError, libpq._text_value, [object()])
        # A time zone the casts to TIMESTAMP would drop.
        self.assertRaises(TypeError, libpq._text_value, datetime.datetime(
            2026, 12, 6, tzinfo=datetime.timezone.utc))
        # libpq would end the text at the NUL.
        self.assertRaises(errors.DataError, libpq._text_value, 'a\x00b')
