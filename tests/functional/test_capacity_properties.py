# SPDX-License-Identifier: Apache-2.0
"""Property: ``capacity list --fit`` says N for a tree, the server agrees.

Random small clouds from the candidate property tests' strategy (trees,
sharing providers, aggregates, inventories with reserved, min_unit,
max_unit, step_size and allocation ratios, existing usage) are built on the
embedded server with fresh uuids; the real shell counts one tree's fit for
a random request, then that many claims of the request are made on the
tree through ``PUT /allocations``, each on a candidate the server offers
within the tree and its sharing providers, and then the server must offer
none.
"""

import uuid

import hypothesis
from hypothesis import strategies as st

from tests.functional import base
from tests.functional import test_capacity
from tests.unit.server import test_candidate_properties as props

SETTINGS = hypothesis.settings(
    max_examples=25, deadline=None, database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow,
                           hypothesis.HealthCheck.function_scoped_fixture])
REQUEST = st.dictionaries(st.sampled_from(props.CLASSES),
                          st.sampled_from([1, 1, 2, 3]), min_size=1)


class RandomClouds:
    """Builds the candidate property tests' random clouds on the server."""

    def build(self, cloud):
        """The cloud on the server, with fresh uuids: {old: new}."""
        new = {}
        aggs = {agg: str(uuid.uuid4()) for agg in props.AGGS}
        for old in sorted(cloud.parent, key=lambda u: len(
                cloud.ancestors_or_self(u))):
            parent = cloud.parent[old]
            new[old] = self.provider('p', parent=parent and new[parent],
                                     aggregate=False)
        for old, rp in new.items():
            self.make_usage(rp, cloud.inventory[old], cloud.used[old])
            if cloud.aggs[old]:
                self.set_provider_aggregates(
                    rp, [aggs[agg] for agg in cloud.aggs[old]])
            if props.cn.SHARING_TRAIT in cloud.traits[old]:
                self.set_provider_traits(rp, [props.cn.SHARING_TRAIT])
        return new

    def make_usage(self, rp, inventory, used):
        """Allocate ``used`` under a roomy inventory, then set the real
        one: usage need not obey the limits set afterwards."""
        self.inventory(rp, **{rc: 1000 for rc in inventory})
        if any(used.values()):
            self.allocate(str(uuid.uuid4()), {
                rp: {rc: amount for rc, amount in used.items() if amount}})
        self.inventory(rp, **{
            rc: dict(zip(('total', 'reserved', 'min_unit', 'max_unit',
                          'step_size', 'allocation_ratio'), fields))
            for rc, fields in inventory.items()})


class FitPropertyTests(RandomClouds, test_capacity.CapacityTestCase):

    def served_by(self, cloud, new, root):
        """The new uuids of a tree's providers and of the sharing
        providers that serve it."""
        tree = {p for p in cloud.parent if cloud.root(p) == root}
        aggs = set().union(*(cloud.aggs[p] for p in tree))
        sharing = {p for p in cloud.parent
                   if props.cn.SHARING_TRAIT in cloud.traits[p]
                   and cloud.aggs[p] & aggs}
        return [new[p] for p in tree | sharing]

    @hypothesis.given(cloud=props.clouds(roots_first=True),
                      request=REQUEST, pick=st.integers(0, 6))
    @SETTINGS
    def test_fit_is_what_the_server_lets_be_claimed(self, cloud, request,
                                                    pick):
        new = self.build(cloud)
        roots = sorted({cloud.root(p) for p in cloud.parent})
        root = roots[pick % len(roots)]
        shape = ','.join('%s=%d' % item for item in sorted(request.items()))
        rows = self.capacity('--in-tree', new[root], '--fit', shape)
        self.assertEqual(new[root], rows[0]['uuid'])
        self.assertClaimsFit(shape, self.served_by(cloud, new, root),
                             rows[0]['fit'])


class UsagesFromSummariesTests(RandomClouds,
                               test_capacity.CapacityTestCase):
    """Usages read from allocation candidates' summaries are the ones
    each provider's own usages request gives."""

    def rows(self, summaries_from):
        with base.fixtures.MonkeyPatch(
                'osc_placement.resources.providers.SUMMARIES_FROM',
                summaries_from):
            return self.in_aggregate()

    @hypothesis.given(cloud=props.clouds(roots_first=True))
    @hypothesis.settings(SETTINGS, max_examples=10)
    def test_same_rows_either_way(self, cloud):
        new = self.build(cloud)
        for rp in new.values():
            aggregates = self.http(
                'GET', '/resource_providers/%s/aggregates' % rp,
                expect=200).json()['aggregates']
            self.set_provider_aggregates(rp, aggregates + [self.aggregate])
        asked = []
        self.hook_server(lambda environ: asked.append(
            environ['PATH_INFO']))
        one_by_one = self.rows(summaries_from=10 ** 9)
        self.assertNotIn('/allocation_candidates', asked)
        del asked[:]
        summarised = self.rows(summaries_from=0)
        self.assertIn('/allocation_candidates', asked)
        self.assertEqual(one_by_one, summarised)
