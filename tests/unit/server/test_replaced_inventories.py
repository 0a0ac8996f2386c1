# SPDX-License-Identifier: Apache-2.0
"""snapshot.with_replaced and ReplacedInventories on their own:
a kept structure's inventories after usage changes, as a new dict or as
the providers replaced over a shared one. (tests/server's
test_candidate_api.py checks the answers of a worker that uses them
against the oracle.)"""

import testtools

from osc_placement.server.candidates import snapshot as cn


def inventories(count):
    """{provider: {class: its usage}} of ``count`` providers."""
    return {'p%d' % n: {'VCPU': n} for n in range(count)}


class TestWithReplaced(testtools.TestCase):

    def test_small_clouds_get_a_new_dict(self):
        base = inventories(100)
        got = cn.with_replaced(base, {'p3': {'VCPU': 0}})
        self.assertIs(dict, type(got))
        self.assertEqual(dict(base, p3={'VCPU': 0}), got)
        self.assertEqual({'VCPU': 3}, base['p3'])

    def test_large_clouds_keep_the_replaced_apart(self):
        self.patch(cn, 'REPLACED_APART_FROM', 100)
        base = inventories(100)
        first = cn.with_replaced(base, {'p3': {'VCPU': 0}})
        self.assertIsInstance(first, cn.ReplacedInventories)
        self.assertIs(base, first.base)
        second = cn.with_replaced(first, {'p5': {'VCPU': 0},
                                          'p3': {'VCPU': 1}})
        # The earlier mappings are as they were: requests still hold them.
        self.assertEqual({'VCPU': 3}, base['p3'])
        self.assertEqual({'VCPU': 0}, first['p3'])
        self.assertEqual({'VCPU': 5}, first['p5'])
        self.assertIs(base, second.base)
        self.assertEqual(dict(base, p3={'VCPU': 1}, p5={'VCPU': 0}),
                         dict(second))

    def test_written_whole_again_past_the_square_root(self):
        self.patch(cn, 'REPLACED_APART_FROM', 100)
        base = inventories(100)
        # Up to sqrt(4 * 100) = 20 replaced are kept apart.
        apart = cn.with_replaced(base, {'p%d' % n: {'VCPU': 0}
                                        for n in range(20)})
        self.assertIsInstance(apart, cn.ReplacedInventories)
        whole = cn.with_replaced(apart, {'p20': {'VCPU': 0}})
        self.assertIs(dict, type(whole))
        self.assertEqual(
            dict(base, **{'p%d' % n: {'VCPU': 0} for n in range(21)}), whole)


class TestReplacedInventories(testtools.TestCase):
    """The mapping the search reads as it reads a dict."""

    def setUp(self):
        super().setUp()
        self.base = inventories(4)
        self.mapping = cn.ReplacedInventories(self.base,
                                              {'p1': {'VCPU': 9}})

    def test_the_replaced_over_the_rest(self):
        self.assertEqual({'VCPU': 9}, self.mapping['p1'])
        self.assertEqual({'VCPU': 9}, self.mapping.get('p1'))
        self.assertEqual({'VCPU': 2}, self.mapping['p2'])
        self.assertEqual({'VCPU': 2}, self.mapping.get('p2'))

    def test_missing_providers(self):
        self.assertIsNone(self.mapping.get('nope'))
        self.assertEqual({}, self.mapping.get('nope', {}))
        self.assertRaises(KeyError, self.mapping.__getitem__, 'nope')
        self.assertNotIn('nope', self.mapping)

    def test_keys_length_and_items(self):
        self.assertEqual(['p0', 'p1', 'p2', 'p3'], list(self.mapping))
        self.assertEqual(4, len(self.mapping))
        self.assertIn('p1', self.mapping)
        self.assertEqual(dict(self.base, p1={'VCPU': 9}),
                         dict(self.mapping.items()))
