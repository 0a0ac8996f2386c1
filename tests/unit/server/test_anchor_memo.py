# SPDX-License-Identifier: Apache-2.0
"""candidates/memo.py's AnchorMemo on its own: what it remembers, when it
forgets, and its bound. (tests/server/test_kept_structure.py checks the
answers of a worker that uses it.)"""

import testtools

from osc_placement.server.candidates import memo as cm
from osc_placement.server.candidates import snapshot as cn


def using(used):
    """A provider's inventories with ``used`` VCPU in use."""
    return {'VCPU': cn.Inventory(8, used=used)}


class TestAnchorMemo(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.memo = cm.AnchorMemo()
        self.inventories = {'a': using(0), 'b': using(0), 'c': using(0)}

    def walked(self, anchor, providers, candidates, inventories=None):
        return list(self.memo.recorded(
            inventories or self.inventories, anchor, providers,
            iter(candidates) if candidates is not None else None))

    def test_a_finished_walk_is_recalled_while_its_providers_stand(self):
        self.assertEqual(['x', 'y'], self.walked('A', ['a', 'c'], ['x', 'y']))
        self.assertEqual([], self.walked('B', ['b'], None))
        self.assertEqual(('x', 'y'), self.memo.recall(self.inventories, 'A'))
        self.assertEqual((), self.memo.recall(self.inventories, 'B'))
        # The same usage read again is the same walk.
        self.assertEqual(('x', 'y'), self.memo.recall(
            dict(self.inventories, c=using(0)), 'A'))
        # New usage of one provider: walked again.
        changed = dict(self.inventories, c=using(1))
        self.assertIsNone(self.memo.recall(changed, 'A'))
        self.assertEqual((), self.memo.recall(changed, 'B'))

    def test_an_unfinished_walk_is_not_remembered(self):
        walk = self.memo.recorded(self.inventories, 'A', ['a'],
                                  iter(['x', 'y']))
        self.assertEqual('x', next(walk))
        walk.close()
        self.assertIsNone(self.memo.recall(self.inventories, 'A'))

    def test_bounded_and_stale_entries_make_room(self):
        self.patch(cm, '_REMEMBERED_SIZE', 5)
        self.walked('A', ['a'], ['x', 'y'])  # 1 entry + 2 candidates
        self.walked('B', ['b'], ['z'])
        self.assertEqual(['w'], self.walked('C', ['c'], ['w']))  # full
        self.assertIsNone(self.memo.recall(self.inventories, 'C'))
        changed = dict(self.inventories, a=using(1))
        self.assertIsNone(self.memo.recall(changed, 'A'))  # forgotten
        self.walked('C', ['c'], ['w'], changed)
        self.assertEqual(('w',), self.memo.recall(changed, 'C'))
        self.assertEqual(('z',), self.memo.recall(changed, 'B'))
        self.assertEqual(4, self.memo._size)


class TestRememberedWalks(testtools.TestCase):

    def test_the_least_recently_asked_request_is_forgotten_first(self):
        self.patch(cm, '_REMEMBERED_REQUESTS', 3)
        walks = cm.RememberedWalks()
        first = walks.memo('a')
        walks.memo('b')
        walks.memo('c')
        self.assertIs(first, walks.memo('a'))  # asked again: kept
        walks.memo('d')  # forgets 'b', the least recently asked
        self.assertIs(first, walks.memo('a'))
        self.assertEqual(['c', 'd', 'a'], list(walks._memos))
