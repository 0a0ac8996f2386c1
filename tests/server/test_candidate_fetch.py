# SPDX-License-Identifier: Apache-2.0
"""candidates/read.py: the SQL slice a request reads, whole or
window by window, holds what the search needs (oracle per anchor), skips
the trees without room and lists a provider's classes in id order."""


import hypothesis
from hypothesis import strategies as st

from osc_placement.server.candidates import door
from osc_placement.server.candidates import request as cq
from osc_placement.server.candidates import snapshot as cn
from osc_placement.server.schemas import request_groups as rg
from tests.server import candidate_cloud as cloud_db
from tests.server import fixtures
from tests.unit.server import candidate_oracle
from tests.unit.server import test_candidate_properties as props


class TestSliceMatchesOracle(cloud_db.AppTestCase):
    """The SQL slice holds what every anchor tree's candidates need.

    Comparing answers misses a tree the slice wrongly leaves out when
    another anchor forms the same candidates (a sharing provider's, say).
    Here the oracle runs on each snapshot the SQL reads (whole, or window
    by window of trees) and must find, anchor by anchor, only candidates
    the whole cloud has under that anchor, and all of them in some
    window."""

    @hypothesis.settings(cloud_db.SETTINGS, max_examples=100)
    @hypothesis.given(props.clouds(roots_first=True, member_of=True),
                      st.data(), st.sampled_from([None, 1, 2, 3]))
    def test_member_of_slice_per_anchor(self, cloud, data, window):
        self._check_slice_per_anchor(cloud, data, window, member_of=True)

    @hypothesis.settings(cloud_db.SETTINGS, max_examples=100)
    @hypothesis.given(cloud_db.TRAITS_CLOUDS, st.data(),
                      st.sampled_from([None, 1, 2, 3]),
                      cloud_db.WITH_MEMBER_OF)
    def test_required_traits_slice_per_anchor(self, cloud, data, window,
                                              member_of):
        """The same for required traits (SliceSpec.tree_traits), with
        member_of now and then: both narrowings at once."""
        self._check_slice_per_anchor(cloud, data, window,
                                     member_of=member_of, traits=True)

    @hypothesis.settings(cloud_db.SETTINGS, max_examples=100)
    @hypothesis.given(cloud_db.TRAITS_CLOUDS, st.data(),
                      st.sampled_from([None, 1, 2, 3]))
    def test_both_narrowings_slice_per_anchor(self, cloud, data, window):
        """Required traits and member_of in every request, often on
        different groups: a tree may meet one narrowing through one
        sharing provider and the other through another, or one itself
        and the other through a sharing provider."""
        self._check_slice_per_anchor(cloud, data, window, member_of=True,
                                     traits=True)

    # Cheap examples, and the shapes that tell apart are rare.
    @hypothesis.settings(cloud_db.SETTINGS, max_examples=300)
    @hypothesis.given(cloud_db.TRAITS_CLOUDS, st.data())
    def test_whole_read_holds_the_contract_trees(self, cloud, data):
        """The SQL reads at least the trees SliceSpec's contract keeps
        (props.sql_slice, as narrow as the contract allows), required
        traits and member_of narrowing them at once. Stricter than the
        per-anchor test: a tree wrongly left out is seen even when no
        candidate of the request needs it."""
        _, _, request, _ = cloud_db.drawn_example(
            self.db, cloud, data, lambda cloud, request: None,
            member_of=True, traits=True)
        with self.db.read() as conn:
            snap = door.open_reader(self.candidate_engine, conn,
                                    request).next_window()
        contract = props.sql_slice(cloud, cq.snapshot_needs(request))
        self.assertLessEqual(set(contract.providers), set(snap.providers))

    def test_narrowings_met_by_two_sharing_providers(self):
        """A tree with neither the trait nor the aggregate asked for,
        served by one sharing provider with the trait and another in the
        aggregate: its candidates take a class from each. (The choose
        statement once required one sharing provider to meet both.)"""
        cloud, pairs = two_servers_cloud()
        request = rg.parse_candidate_request(pairs, (1, 39))
        expected = candidate_oracle.oracle_by_anchor(cloud, request)
        self.assertTrue(expected[props.rp_uuid(0)])
        cloud_db.write_cloud(self.db, cloud)
        for window in (None, 1, 2):
            self._assert_slice_per_anchor(request, expected, window)

    def _check_slice_per_anchor(self, cloud, data, window, **kinds):
        _, _, request, expected = cloud_db.drawn_example(
            self.db, cloud, data, candidate_oracle.oracle_by_anchor,
            **kinds)
        self._assert_slice_per_anchor(request, expected, window)

    def _assert_slice_per_anchor(self, request, expected, window):
        """Read the written cloud's slice for ``request`` (in windows of
        ``window`` trees); compare anchor by anchor with ``expected``,
        the oracle's candidates per anchor on the whole cloud."""
        found = {}
        with self.db.read() as conn:
            reader = door.open_reader(self.candidate_engine, conn, request)
            while True:
                snap = reader.next_window(window)
                for anchor, keys in candidate_oracle.oracle_by_anchor(
                        cloud_db.SnapshotCloud(snap), request).items():
                    self.assertLessEqual(keys, expected.get(anchor, set()),
                                         anchor)
                    found.setdefault(anchor, set()).update(keys)
                if reader.whole:
                    break
        for anchor, keys in expected.items():
            self.assertEqual(keys, found.get(anchor, set()), anchor)


def two_servers_cloud():
    """The tree rooted at rp 0 (no inventory, no trait) is served by two
    sharing providers: rp 1 with CUSTOM_A, through aggregate 2, and rp 2
    in aggregate 0, through aggregate 1. The request takes VCPU with
    CUSTOM_A and DISK_GB from aggregate 0: (cloud, query pairs)."""
    in_agg0, link1, link2 = props.AGGS
    root, trait_server, agg_server = (props.rp_uuid(i) for i in range(3))
    roomy = (8, 0, 1, 8, 1, 1.0)
    cloud = candidate_oracle.Cloud(
        dict.fromkeys([root, trait_server, agg_server]),
        {root: {}, trait_server: {'VCPU': roomy},
         agg_server: {'DISK_GB': roomy}}, {},
        {root: set(), trait_server: {'CUSTOM_A', cn.SHARING_TRAIT},
         agg_server: {cn.SHARING_TRAIT}},
        {root: {link1, link2}, trait_server: {link2},
         agg_server: {in_agg0, link1}})
    pairs = [('resources', 'VCPU:1'), ('required', 'CUSTOM_A'),
             ('resources1', 'DISK_GB:1'), ('member_of1', in_agg0)]
    return cloud, pairs


class TestWindowsSkipFilledHosts(cloud_db.AppTestCase):

    def test_hosts_without_room_for_every_class_are_not_read(self):
        """The first trees by id are hosts a scheduler filled: no VCPU
        left, memory left. A window of two trees is spent on the two
        hosts with room for both, not on two of those: one choose
        statement, not a second window after an empty first."""
        parent = {props.rp_uuid(i): None for i in range(6)}
        inventory = {u: {'VCPU': (4, 0, 1, 4, 1, 1.0),
                         'MEMORY_MB': (1024, 0, 1, 1024, 1, 1.0)}
                     for u in parent}
        filled = {props.rp_uuid(i): {'VCPU': 4} for i in range(4)}
        cloud = candidate_oracle.Cloud(
            parent, inventory, filled, {u: set() for u in parent},
            {u: set() for u in parent})
        cloud_db.write_cloud(self.db, cloud)
        cloud_db.read_in_windows(self, 2)
        with fixtures.recorded_statements(self.db.engine) as statements:
            status, body = cloud_db.get_candidates(
                self.app, (1, 39), [('resources', 'VCPU:1,MEMORY_MB:128'),
                                    ('limit', '2')])
        self.assertEqual(200, status, body)
        self.assertEqual(
            [{props.rp_uuid(4)}, {props.rp_uuid(5)}],
            sorted((set(r['allocations'])
                    for r in body['allocation_requests']), key=min))
        self.assertEqual(1, len([s for s in statements if 'roots AS' in s]))

    def test_hosts_served_by_shared_storage_are_read(self):
        """A host without disk of its own, served by a sharing provider
        with disk, has room for every class: its window reads it."""
        agg = 'aaaaaaaa-0000-4000-8000-000000000000'
        share, host = props.rp_uuid(0), props.rp_uuid(1)
        cloud = candidate_oracle.Cloud(
            {share: None, host: None},
            {share: {'DISK_GB': (100, 0, 1, 100, 1, 1.0)},
             host: {'VCPU': (4, 0, 1, 4, 1, 1.0)}},
            {}, {share: {'MISC_SHARES_VIA_AGGREGATE'}, host: set()},
            {share: {agg}, host: {agg}})
        cloud_db.write_cloud(self.db, cloud)
        cloud_db.read_in_windows(self, 1)
        status, body = cloud_db.get_candidates(
            self.app, (1, 39), [('resources', 'VCPU:1,DISK_GB:10'),
                                ('limit', '1')])
        self.assertEqual(200, status, body)
        self.assertEqual(
            [{host: {'resources': {'VCPU': 1}},
              share: {'resources': {'DISK_GB': 10}}}],
            [r['allocations'] for r in body['allocation_requests']])


class TestSummaryOrder(cloud_db.AppTestCase):

    def test_classes_in_class_id_order_whatever_the_read(self):
        """A provider's classes are summarised in class id order, however
        its inventories were written and whichever read (whole or in
        windows) returned them."""
        root = props.rp_uuid(0)
        cloud = candidate_oracle.Cloud(
            {root: None},
            {root: {'MEMORY_MB': (1024, 0, 1, 1024, 1, 1.0),
                    'DISK_GB': (100, 0, 1, 100, 1, 1.0),
                    'VCPU': (8, 0, 1, 8, 1, 1.0)}},
            {}, {root: set()}, {root: set()})
        cloud_db.write_cloud(self.db, cloud)
        for limit in ([], [('limit', '1')]):
            status, body = cloud_db.get_candidates(
                self.app, (1, 39), [('resources', 'VCPU:1')] + limit)
            self.assertEqual(200, status, body)
            self.assertEqual(
                ['VCPU', 'MEMORY_MB', 'DISK_GB'],
                list(body['provider_summaries'][root]['resources']))
