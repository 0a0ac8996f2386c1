# SPDX-License-Identifier: Apache-2.0
"""How many candidates the [placement] generation options let through,
which computes they land on, and that the same query gets the same bytes.

The cases are those upstream's functional tests pin down for
``max_allocation_candidates`` and
``allocation_candidates_generation_strategy``: two computes, each with
eight physical functions of eight virtual functions, asked for one VF in
each of N request groups (group_policy=none), so that every group may
take any PF of the compute and each compute holds 8**N candidates. Plus
the wide-tree case of ``[workarounds] optimize_for_wide_provider_trees``
(upstream bug #2126751): a partly used child must never be offered to
more groups than its free capacity holds, with the option on or off.

Requests go through the whole WSGI app on the test database
(OSC_PLACEMENT_TEST_DB_URL; SQLite by default).
"""

import collections
import urllib.parse

import webob

from osc_placement.server import app as app_mod
from osc_placement.server import conf as conf_mod
from tests.server import candidate_cloud as cloud_db
from tests.server import fixtures
from tests.unit.server import candidate_oracle
from tests.unit.server import test_candidate_properties as props

VERSION = (1, 38)
VF = 'SRIOV_NET_VF'
# (total, reserved, min_unit, max_unit, step_size, allocation_ratio)
COMPUTE_INVENTORY = {'VCPU': (8, 0, 1, 8, 1, 1.0),
                     'MEMORY_MB': (4096, 0, 1, 4096, 1, 1.0),
                     'DISK_GB': (500, 0, 1, 500, 1, 1.0)}
# The root's share of every request: what one instance asks of a compute.
ROOT_RESOURCES = 'DISK_GB:20,MEMORY_MB:2048,VCPU:2'


def vf_inventory(vfs):
    return {VF: (vfs, 0, 1, vfs, 1, 1.0)}


def write_computes(db, computes, pfs, vfs_per_pf, used=None):
    """``computes`` roots with ``pfs`` children of ``vfs_per_pf`` VFs
    each; ``used`` maps a child's (compute, pf) to VFs already taken.
    Returns the computes' uuids and the children's, by (compute, pf)."""
    roots = [props.rp_uuid(c) for c in range(computes)]
    # Children sort after every root: the cloud is written parents first.
    children = {(c, p): props.rp_uuid(computes + c * pfs + p)
                for c in range(computes) for p in range(pfs)}
    parent = dict.fromkeys(roots)
    inventory = {root: dict(COMPUTE_INVENTORY) for root in roots}
    for (c, _), child in children.items():
        parent[child] = roots[c]
        inventory[child] = vf_inventory(vfs_per_pf)
    taken = {children[key]: {VF: n} for key, n in (used or {}).items()}
    cloud = candidate_oracle.Cloud(parent, inventory, taken,
                                   {u: set() for u in parent},
                                   {u: set() for u in parent})
    cloud_db.write_cloud(db, cloud)
    return roots, children


def vf_query(groups, limit, vfs_per_group=1):
    pairs = [('resources', ROOT_RESOURCES)]
    pairs += [('resources%d' % g, '%s:%d' % (VF, vfs_per_group))
              for g in range(1, groups + 1)]
    pairs += [('group_policy', 'none'), ('limit', str(limit))]
    return pairs


def get_raw(app, pairs):
    """(status, body bytes) of GET /allocation_candidates."""
    req = webob.Request.blank(
        '/allocation_candidates?' + urllib.parse.urlencode(pairs),
        headers={'x-auth-token': 'admin',
                 'openstack-api-version': 'placement %d.%d' % VERSION})
    resp = req.get_response(app)
    return resp.status_int, resp.body


class _GenerationTestCase(cloud_db.AppTestCase):

    def app_with(self, **options):
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False, **options)
        return app_mod.make_app(conf, db=self.db)

    def candidates(self, app, pairs):
        status, body = cloud_db.get_candidates(app, VERSION, pairs)
        self.assertEqual(200, status, body)
        return body['allocation_requests']

    def per_compute(self, requests, roots):
        """How many candidates take their root resources from each
        compute (one per candidate: the unsuffixed group is the root's)."""
        counts = collections.Counter()
        for request in requests:
            on = set(request['allocations']) & set(roots)
            self.assertEqual(1, len(on), request)
            counts.update(on)
        return counts


class TestCountsAndSpread(_GenerationTestCase):
    """Two computes x 8 PFs x 8 VFs, as upstream's tests build them."""

    def setUp(self):
        super().setUp()
        self.roots, _ = write_computes(self.db, computes=2, pfs=8,
                                       vfs_per_pf=8)

    def spread(self, groups, limit, **options):
        app = self.app_with(**options)
        requests = self.candidates(app, vf_query(groups, limit))
        counts = self.per_compute(requests, self.roots)
        return len(requests), sorted(counts.values(), reverse=True)

    def both_strategies(self):
        return ('depth-first', 'breadth-first')

    def test_every_candidate_when_the_limit_is_above_them(self):
        # Two groups: 8 * 8 per compute.
        for strategy in self.both_strategies():
            self.assertEqual(
                (128, [64, 64]),
                self.spread(2, 1000, max_allocation_candidates=100000,
                            allocation_candidates_generation_strategy=(
                                strategy)))

    def test_the_request_limit_cuts_breadth_first_evenly(self):
        # Four groups: 8,192 candidates, a thousand asked for.
        self.assertEqual(
            (1000, [500, 500]),
            self.spread(4, 1000, max_allocation_candidates=100000,
                        allocation_candidates_generation_strategy=(
                            'breadth-first')))

    def test_depth_first_fills_the_first_compute(self):
        # Six groups: 524,288 candidates; upstream generates 100,000 of
        # them, all on one compute, before cutting to the limit.
        self.assertEqual(
            (1000, [1000]),
            self.spread(6, 1000, max_allocation_candidates=100000,
                        allocation_candidates_generation_strategy=(
                            'depth-first')))

    def test_breadth_first_spreads_over_both_computes(self):
        self.assertEqual(
            (1000, [500, 500]),
            self.spread(6, 1000, max_allocation_candidates=100000,
                        allocation_candidates_generation_strategy=(
                            'breadth-first')))

    def test_no_global_limit_needed_to_answer_a_limited_request(self):
        # Upstream times out here without max_allocation_candidates.
        for strategy in self.both_strategies():
            count, _ = self.spread(
                6, 1000, allocation_candidates_generation_strategy=strategy)
            self.assertEqual(1000, count)

    def test_the_global_limit_below_the_request_limit(self):
        # 8,192 candidates, 8,000 generated, 9,000 asked for.
        self.assertEqual(
            (8000, [4000, 4000]),
            self.spread(4, 9000, max_allocation_candidates=8000,
                        allocation_candidates_generation_strategy=(
                            'breadth-first')))
        self.assertEqual(
            (8000, [4096, 3904]),
            self.spread(4, 9000, max_allocation_candidates=8000,
                        allocation_candidates_generation_strategy=(
                            'depth-first')))

    def test_every_candidate_without_a_global_limit(self):
        for strategy in self.both_strategies():
            self.assertEqual(
                (8192, [4096, 4096]),
                self.spread(4, 9000, max_allocation_candidates=-1,
                            allocation_candidates_generation_strategy=(
                                strategy)))

    def test_any_negative_global_limit_means_none(self):
        # Upstream's option has no lower bound and caps only from zero up.
        self.assertEqual(
            (8192, [4096, 4096]),
            self.spread(4, 9000, max_allocation_candidates=-2))

    def test_a_zero_global_limit_still_answers_one(self):
        # Upstream checks the cap after adding a candidate.
        self.assertEqual(
            (1, [1]), self.spread(4, 9000, max_allocation_candidates=0))

    def test_candidates_are_distinct(self):
        requests = self.candidates(
            self.app_with(max_allocation_candidates=-1), vf_query(4, 9000))
        keys = cloud_db.candidate_keys({'allocation_requests': requests},
                                       VERSION)
        self.assertEqual(8192, len(keys))


class TestSameQuerySameBytes(_GenerationTestCase):
    """Two identical queries answer byte-identical bodies, whether the
    second is answered afresh or from what the first left behind."""

    def setUp(self):
        super().setUp()
        write_computes(self.db, computes=2, pfs=8, vfs_per_pf=8)

    def twice(self, strategy, pairs):
        app = self.app_with(
            allocation_candidates_generation_strategy=strategy)
        first = get_raw(app, pairs)
        again = get_raw(app, pairs)
        # Nothing kept from the first: the structure is read again and
        # the search runs again, in an application (and engine) made anew.
        afresh = get_raw(self.app_with(
            allocation_candidates_generation_strategy=strategy), pairs)
        return first, again, afresh

    def test_byte_identical_bodies(self):
        for strategy in ('breadth-first', 'depth-first'):
            for groups, limit in ((2, 1000), (4, 300)):
                first, again, afresh = self.twice(strategy,
                                                  vf_query(groups, limit))
                self.assertEqual(200, first[0])
                self.assertEqual(first, again)
                self.assertEqual(first, afresh)


class TestWideTreeUsedCapacity(_GenerationTestCase):
    """Upstream's optimize_for_wide_provider_trees checks the summed
    amounts against capacity but not against what is already used, so a
    partly used child may be offered to more groups than it has room
    for. Here no candidate ever overfills a child, option on or off."""

    OPTION = 'optimize_for_wide_provider_trees'

    def test_a_partly_used_child_takes_no_more_than_is_free(self):
        # One compute, two PFs of 2 VFs; the first has 1 VF in use.
        _, children = write_computes(self.db, computes=1, pfs=2,
                                     vfs_per_pf=2, used={(0, 0): 1})
        used_pf, free_pf = children[(0, 0)], children[(0, 1)]
        for optimize in (False, True):
            app = self.app_with(**{self.OPTION: optimize})
            requests = self.candidates(app, vf_query(2, 100))
            taken = [{uuid: request['allocations'].get(uuid, {}).get(
                'resources', {}).get(VF, 0) for uuid in (used_pf, free_pf)}
                for request in requests]
            self.assertNotIn({used_pf: 2, free_pf: 0}, taken, optimize)
            # Group 1 on one PF and group 2 on the other, either way
            # round, or both on the free one.
            self.assertEqual(3, len(requests), optimize)
            for amounts in taken:
                self.assertLessEqual(amounts[used_pf], 1, optimize)

    def test_a_full_child_is_never_offered(self):
        # Every VF of the first PF is used: only the second serves.
        _, children = write_computes(self.db, computes=1, pfs=2,
                                     vfs_per_pf=2, used={(0, 0): 2})
        for optimize in (False, True):
            app = self.app_with(**{self.OPTION: optimize})
            requests = self.candidates(app, vf_query(2, 100))
            self.assertEqual(1, len(requests), optimize)
            self.assertNotIn(children[(0, 0)], requests[0]['allocations'])

    def test_the_option_is_accepted_in_the_workarounds_group(self):
        conf = conf_mod.make_conf(fixtures._state['url'],
                                  sync_on_startup=False,
                                  **{self.OPTION: True})
        self.assertTrue(conf.workarounds.optimize_for_wide_provider_trees)
        self.assertFalse(conf_mod.make_conf(
            fixtures._state['url'], sync_on_startup=False
        ).workarounds.optimize_for_wide_provider_trees)


class TestManyNonViableOrderings(_GenerationTestCase):
    """Upstream's bug #2126751 cases: children of one VF each and as many
    groups as children, so that nearly every combination of per-group
    choices overfills a child. Option on or off, the answer comes at
    once and holds the candidates asked for."""

    def count_and_spread(self, computes, pfs, groups, cap, limit,
                         **options):
        roots, _ = write_computes(self.db, computes=computes, pfs=pfs,
                                  vfs_per_pf=1)
        results = []
        for optimize in (False, True):
            app = self.app_with(max_allocation_candidates=cap,
                                optimize_for_wide_provider_trees=optimize,
                                **options)
            requests = self.candidates(app, vf_query(groups, limit))
            results.append((len(requests),
                            len(self.per_compute(requests, roots))))
        return results

    def test_eight_children_eight_groups(self):
        self.assertEqual([(1000, 1)] * 2,
                         self.count_and_spread(1, 8, 8, 1000, 10000))

    def test_twenty_one_children_twenty_one_groups(self):
        self.assertEqual([(1000, 1)] * 2,
                         self.count_and_spread(1, 21, 21, 1000, 1000))

    def test_sixty_four_children_on_two_computes(self):
        self.assertEqual(
            [(10, 2)] * 2,
            self.count_and_spread(
                2, 64, 64, 10, 10,
                allocation_candidates_generation_strategy='breadth-first'))
