# SPDX-License-Identifier: Apache-2.0
"""The arithmetic of ``resource provider capacity list``, without a server.

The functional tests check the counts against the embedded server's
allocations; these check the counting rule against a slow simulation of
successive claims, and the input parsing.
"""

import random

from osc_lib import exceptions
import testtools

from osc_placement import provider_rules
from osc_placement.resources import capacity


def inventory(total, reserved=0, ratio=1.0, min_unit=1, max_unit=None,
              step_size=1):
    return {'total': total, 'reserved': reserved, 'allocation_ratio': ratio,
            'min_unit': min_unit, 'max_unit': max_unit or total,
            'step_size': step_size}


class ArithmeticTests(testtools.TestCase):

    def test_capacity_truncates_like_placement(self):
        self.assertEqual(4, provider_rules.capacity(inventory(3, ratio=1.5)))
        self.assertEqual(28, provider_rules.capacity(inventory(8, 1, 4.0)))
        self.assertEqual(0, provider_rules.capacity(inventory(4, 4)))

    def test_slots_honour_unit_limits(self):
        inv = inventory(100, min_unit=10, max_unit=40, step_size=5)
        self.assertEqual(10, capacity.slots(inv, 0, 10))
        self.assertEqual(2, capacity.slots(inv, 0, 40))
        self.assertEqual(0, capacity.slots(inv, 0, 45))   # > max_unit
        self.assertEqual(0, capacity.slots(inv, 0, 5))    # < min_unit
        self.assertEqual(0, capacity.slots(inv, 0, 12))   # step_size
        self.assertEqual(4, capacity.slots(inv, 60, 10))
        self.assertEqual(0, capacity.slots(inv, 95, 10))
        self.assertEqual(0, capacity.slots(inv, 120, 10))  # overcommitted

    def test_parse_fit(self):
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 8192},
                         capacity.parse_fit('VCPU=4, MEMORY_MB=8192'))
        for bad in ('', 'VCPU', 'VCPU=', 'VCPU=0', 'VCPU=1.5', 'VCPU=a',
                    'VCPU=1,,DISK_GB=1', '=3'):
            self.assertRaises(exceptions.CommandError, capacity.parse_fit,
                              bad)
        self.assertRaises(exceptions.CommandError, capacity.parse_fit,
                          'VCPU=1,VCPU=2')

    def test_totals_rows(self):
        rows = capacity.provider_rows(
            {'uuid': 'a', 'name': 'A'},
            {'VCPU': inventory(8, 1, 4.0), 'DISK_GB': inventory(10)},
            {'VCPU': 7})
        rows += capacity.provider_rows({'uuid': 'b', 'name': 'B'},
                                       {'VCPU': inventory(4)}, {},
                                       classes=['VCPU'])
        self.assertEqual(
            [('(total)', '(total)', 'DISK_GB', 10, 0, '', 10, 0, 10, 0.0),
             ('(total)', '(total)', 'VCPU', 12, 1, '', 32, 7, 25, 21.9)],
            capacity.total_rows(rows))


def simulate(request, trees, sharing, pools, order):
    """Claim one request at a time, round robin over ``order``, each class
    from the provider with the most slots that can serve the tree; a tree
    that cannot take a claim drops out. Returns claims per tree."""
    pools = {p: dict(room) for p, room in pools.items()}
    placed = dict.fromkeys(order, 0)
    active = list(order)
    while active:
        for root in list(active):
            providers = list(trees[root]) + list(sharing.get(root, ()))
            choice = {}
            for rc in request:
                best = max(providers,
                           key=lambda p: pools.get(p, {}).get(rc, 0))
                if pools.get(best, {}).get(rc, 0) <= 0:
                    break
                choice[rc] = best
            else:
                for rc, provider in choice.items():
                    pools[provider][rc] -= 1
                placed[root] += 1
                continue
            active.remove(root)
    return placed


def random_cloud(rng):
    classes = ['VCPU', 'MEMORY_MB', 'DISK_GB'][:rng.randint(1, 3)]
    trees, pools = {}, {}
    for t in range(rng.randint(1, 4)):
        root = 'tree%d' % t
        trees[root] = [root] + ['%s-c%d' % (root, c)
                                for c in range(rng.randint(0, 2))]
        for provider in trees[root]:
            pools[provider] = {rc: rng.randint(0, 6) for rc in classes
                               if rng.random() < 0.6}
    sharing = {}
    for s in range(rng.randint(0, 2)):
        pool = 'share%d' % s
        pools[pool] = {rc: rng.randint(0, 8) for rc in classes
                       if rng.random() < 0.7}
        for root in trees:
            if rng.random() < 0.6:
                sharing.setdefault(root, []).append(pool)
    return dict.fromkeys(classes, 1), trees, sharing, pools


class FitCounterTests(testtools.TestCase):

    def test_per_tree_equals_claims_one_by_one(self):
        rng = random.Random(1515)
        for _ in range(300):
            request, trees, sharing, pools = random_cloud(rng)
            counter = capacity.FitCounter(request, trees, sharing, pools)
            for root in trees:
                alone = simulate(request, {root: trees[root]}, sharing,
                                 pools, [root])
                self.assertEqual(alone[root], counter.per_tree(root))

    def test_total_within_bounds(self):
        rng = random.Random(2323)
        for _ in range(300):
            request, trees, sharing, pools = random_cloud(rng)
            counter = capacity.FitCounter(request, trees, sharing, pools)
            total = counter.total()
            self.assertLessEqual(total, sum(counter.per_tree(root)
                                            for root in trees))
            # Shared room once: no more than every pool's slots allow.
            for rc in request:
                self.assertLessEqual(total, sum(room.get(rc, 0)
                                                for room in pools.values()))
            # Lower bounds, so that a total of 0 (or one that drops the
            # shared room) cannot pass: every tree can at least take what
            # its own providers alone allow, whatever the others do ...
            own = sum(capacity.FitCounter(request, {root: trees[root]}, {},
                                          pools).per_tree(root)
                      for root in trees)
            self.assertGreaterEqual(total, own)
            # ... and at least as many claims as placing them one at a
            # time, round robin over the trees, manages at once.
            one_by_one = sum(simulate(request, trees, sharing, pools,
                                      list(trees)).values())
            self.assertGreaterEqual(total, one_by_one)
            if not sharing:
                # Without sharing the trees are independent.
                self.assertEqual(total, one_by_one)

    def test_sharing_counted_once(self):
        trees = {'a': ['a'], 'b': ['b']}
        sharing = {'a': ['pool'], 'b': ['pool']}
        pools = {'a': {'VCPU': 4}, 'b': {'VCPU': 4}, 'pool': {'DISK_GB': 5}}
        counter = capacity.FitCounter({'VCPU': 1, 'DISK_GB': 10}, trees,
                                      sharing, pools)
        self.assertEqual((4, 4, 5), (counter.per_tree('a'),
                                     counter.per_tree('b'), counter.total()))

    def test_own_room_before_shared_room(self):
        # a has its own disk; served first it must not eat b's only disk.
        trees = {'a': ['a'], 'b': ['b']}
        sharing = {'a': ['pool'], 'b': ['pool']}
        pools = {'a': {'VCPU': 2, 'DISK_GB': 2}, 'b': {'VCPU': 2},
                 'pool': {'DISK_GB': 2}}
        counter = capacity.FitCounter({'VCPU': 1, 'DISK_GB': 1}, trees,
                                      sharing, pools)
        self.assertEqual(4, counter.total())

    def test_one_tree_does_not_spend_all_shared_room(self):
        # a is served by p and q, b only by p. Filling a first from p (the
        # own-room-first order) leaves b nothing: 2 claims. The best is 4
        # (a on q, b on p); one claim per tree in turn finds at least 3.
        trees = {'a': ['a'], 'b': ['b']}
        sharing = {'a': ['p', 'q'], 'b': ['p']}
        pools = {'a': {'VCPU': 2}, 'b': {'VCPU': 2},
                 'p': {'DISK_GB': 2}, 'q': {'DISK_GB': 2}}
        counter = capacity.FitCounter({'VCPU': 1, 'DISK_GB': 1}, trees,
                                      sharing, pools)
        self.assertEqual(2, counter._own_room_first())
        self.assertIn(counter.total(), (3, 4))
