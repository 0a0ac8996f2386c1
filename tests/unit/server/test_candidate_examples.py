# SPDX-License-Identifier: Apache-2.0
"""Example tests: the classic layouts, config knobs and response shapes."""

import random
import uuid as uuid_lib

import orjson
import testtools

from osc_placement.server.candidates import body as cb
from osc_placement.server.candidates import request as cq
from osc_placement.server.candidates import search as cs
from osc_placement.server.candidates import snapshot as cn
from osc_placement.server import json_encoding
from osc_placement.server.schemas import request_groups as rg


def sent_body(result, request, snap):
    """The candidates' body as a client receives it: parts of it are
    JSON already (orjson.Fragment), which only the encoding shows."""
    return orjson.loads(json_encoding.json_bytes(
        cb.allocation_candidates_body(result, request, snap)))


AGG_A = 'aaaaaaaa-0000-4000-8000-00000000000a'
AGG_B = 'aaaaaaaa-0000-4000-8000-00000000000b'
SHARES = cn.SHARING_TRAIT


def uid(name):
    return str(uuid_lib.uuid5(uuid_lib.NAMESPACE_DNS, name))


class CloudBuilder:
    """Providers by name; inventories as {class: total or Inventory}."""

    def __init__(self):
        self.providers, self.invs, self.traits, self.aggs = [], [], [], []
        self.roots = {}

    def add(self, name, parent=None, inv=None, traits=(), aggs=(),
            used=None):
        me = uid(name)
        root = self.roots[uid(parent)] if parent else me
        self.roots[me] = root
        self.providers.append((me, name, 1, uid(parent) if parent else None,
                               root))
        for rc, spec in (inv or {}).items():
            if isinstance(spec, int):
                spec = cn.Inventory(total=spec)
            fields = (spec.total, spec.reserved, spec.min_unit, spec.max_unit,
                      spec.step_size, spec.allocation_ratio,
                      (used or {}).get(rc, 0))
            self.invs.append((me, rc) + fields)
        self.traits += [(me, t) for t in traits]
        self.aggs += [(me, a) for a in aggs]
        return self

    def snapshot(self):
        return cn.Snapshot.from_rows(self.providers, self.invs, self.traits,
                                     self.aggs)


def run(snap, pairs, version=(1, 39), **options):
    request = rg.parse_candidate_request(pairs, version)
    return cs.search(snap, request, cq.SearchOptions(**options)), request


def named(result):
    """Candidates as sets of (provider name, class, amount) for asserts."""
    names = {}
    for name in ('cn1', 'cn2', 'ss', 'ss1', 'ss2', 'numa0', 'numa1', 'pf0',
                 'pf1', 'cn', 'root', 'pf', 'gpu'):
        names[uid(name)] = name
    return sorted(sorted((names.get(u, u), rc, n)
                         for u, resources in c.allocations
                         for rc, n in resources)
                  for c in result.candidates)


def shared_storage():
    return (CloudBuilder()
            .add('cn1', inv={'VCPU': 8, 'MEMORY_MB': 2048}, aggs=[AGG_A])
            .add('cn2', inv={'VCPU': 8, 'MEMORY_MB': 2048}, aggs=[AGG_A])
            .add('ss', inv={'DISK_GB': 1000}, aggs=[AGG_A],
                 traits=[SHARES, 'STORAGE_DISK_SSD'])
            .snapshot())


class TestSharedStorage(testtools.TestCase):

    def test_disk_from_sharing_provider(self):
        result, _ = run(shared_storage(),
                        [('resources', 'VCPU:1,DISK_GB:100')])
        self.assertEqual(
            [[('cn1', 'VCPU', 1), ('ss', 'DISK_GB', 100)],
             [('cn2', 'VCPU', 1), ('ss', 'DISK_GB', 100)]], named(result))
        self.assertEqual({uid('cn1'), uid('cn2'), uid('ss')},
                         result.summary_providers)

    def test_required_trait_on_sharing_provider_counts(self):
        result, _ = run(shared_storage(),
                        [('resources', 'VCPU:1,DISK_GB:100'),
                         ('required', 'STORAGE_DISK_SSD')])
        self.assertEqual(2, len(result.candidates))

    def test_in_tree_disables_sharing(self):
        result, _ = run(shared_storage(),
                        [('resources', 'VCPU:1,DISK_GB:100'),
                         ('in_tree', uid('cn1'))])
        self.assertEqual([], result.candidates)

    def test_in_tree_granular_on_sharing_provider(self):
        result, _ = run(shared_storage(),
                        [('resources', 'VCPU:1'),
                         ('resources1', 'DISK_GB:100'),
                         ('in_tree1', uid('ss'))])
        self.assertEqual(2, len(result.candidates))

    def test_not_in_aggregate_not_shared(self):
        snap = (CloudBuilder()
                .add('cn1', inv={'VCPU': 8}, aggs=[AGG_B])
                .add('ss', inv={'DISK_GB': 1000}, aggs=[AGG_A],
                     traits=[SHARES])
                .snapshot())
        result, _ = run(snap, [('resources', 'VCPU:1,DISK_GB:100')])
        self.assertEqual([], result.candidates)

    def test_granular_group_on_two_sharing_disks(self):
        snap = (CloudBuilder()
                .add('cn1', inv={'VCPU': 8}, aggs=[AGG_A])
                .add('ss1', inv={'DISK_GB': 1000}, aggs=[AGG_A],
                     traits=[SHARES])
                .add('ss2', inv={'DISK_GB': 1000}, aggs=[AGG_A],
                     traits=[SHARES])
                .snapshot())
        result, _ = run(snap, [('resources1', 'DISK_GB:800')])
        self.assertEqual([[('ss1', 'DISK_GB', 800)],
                          [('ss2', 'DISK_GB', 800)]], named(result))
        self.assertEqual({uid('ss1'), uid('ss2')}, result.summary_providers)

    def test_sharing_only_group_combines_with_every_anchor(self):
        # Upstream's per-group set collapses the sharing-only option of the
        # unsuffixed group to one (arbitrary) anchor; we keep every anchor.
        result, _ = run(shared_storage(), [('resources', 'DISK_GB:10'),
                                           ('resources1', 'VCPU:1')])
        self.assertEqual(
            [[('cn1', 'VCPU', 1), ('ss', 'DISK_GB', 10)],
             [('cn2', 'VCPU', 1), ('ss', 'DISK_GB', 10)]], named(result))

    def test_member_of_and_forbidden_aggregate(self):
        result, _ = run(shared_storage(), [('resources', 'VCPU:1'),
                                           ('member_of', AGG_A)])
        self.assertEqual(2, len(result.candidates))
        result, _ = run(shared_storage(), [('resources', 'VCPU:1'),
                                           ('member_of', '!' + AGG_A)])
        self.assertEqual([], result.candidates)


def numa_with_pfs():
    return (CloudBuilder()
            .add('cn', inv={'DISK_GB': 100}, traits=['HW_CPU_X86_AVX2'],
                 aggs=[AGG_A])
            .add('numa0', parent='cn', inv={'VCPU': 4, 'MEMORY_MB': 2048},
                 traits=['HW_NUMA_ROOT'])
            .add('numa1', parent='cn', inv={'VCPU': 4, 'MEMORY_MB': 2048},
                 traits=['HW_NUMA_ROOT'])
            .add('pf0', parent='numa0', inv={'SRIOV_NET_VF': 4},
                 traits=['CUSTOM_PHYSNET1'])
            .add('pf1', parent='numa1', inv={'SRIOV_NET_VF': 4},
                 traits=['CUSTOM_PHYSNET2'])
            .snapshot())


class TestNumaWithPfs(testtools.TestCase):

    def test_spread_across_tree(self):
        result, _ = run(numa_with_pfs(),
                        [('resources', 'VCPU:2,SRIOV_NET_VF:1')])
        self.assertEqual(4, len(result.candidates))
        self.assertEqual(5, len(result.summary_providers))

    def test_forbidden_trait_drops_a_provider_either_way(self):
        """A forbidden trait of the unsuffixed group drops the provider
        that has it, whether the spread search tests providers one by one
        (its first anchors) or against each class's takers (later ones)."""
        snap = (CloudBuilder()
                .add('cn1', inv={'VCPU': 8}, traits=['CUSTOM_SLOW'])
                .add('cn2', inv={'VCPU': 8})
                .snapshot())
        for one_by_one in (0, 32):
            self.patch(cs, '_ONE_BY_ONE_ANCHORS', one_by_one)
            result, _ = run(snap, [('resources', 'VCPU:1'),
                                   ('required', '!CUSTOM_SLOW')])
            self.assertEqual([[('cn2', 'VCPU', 1)]], named(result))

    def test_before_1_29_one_provider_per_tree(self):
        result, _ = run(numa_with_pfs(),
                        [('resources', 'VCPU:2,SRIOV_NET_VF:1')], (1, 28))
        self.assertEqual([], result.candidates)

    def test_before_1_29_single_child_is_returned(self):
        result, _ = run(numa_with_pfs(), [('resources', 'VCPU:2')], (1, 28))
        self.assertEqual([[('numa0', 'VCPU', 2)], [('numa1', 'VCPU', 2)]],
                         named(result))
        self.assertEqual({uid('numa0'), uid('numa1')},
                         result.summary_providers)

    def test_same_subtree_pins_pf_to_its_numa_node(self):
        pairs = [('resources_COMPUTE', 'VCPU:2'),
                 ('resources_NET', 'SRIOV_NET_VF:1'),
                 ('required_NET', 'CUSTOM_PHYSNET1'),
                 ('group_policy', 'isolate')]
        result, _ = run(numa_with_pfs(), pairs)
        self.assertEqual(2, len(result.candidates))
        result, _ = run(numa_with_pfs(),
                        pairs + [('same_subtree', '_COMPUTE,_NET')])
        self.assertEqual([[('numa0', 'VCPU', 2), ('pf0', 'SRIOV_NET_VF', 1)]],
                         named(result))
        self.assertEqual({'_COMPUTE': [uid('numa0')], '_NET': [uid('pf0')]},
                         result.candidates[0].mapping_dict())

    def test_resourceless_group_in_same_subtree(self):
        result, _ = run(numa_with_pfs(),
                        [('resources_COMPUTE', 'VCPU:1'),
                         ('required_NUMA', 'HW_NUMA_ROOT'),
                         ('required_NIC', 'CUSTOM_PHYSNET2'),
                         ('same_subtree', '_NUMA,_COMPUTE,_NIC'),
                         ('group_policy', 'none')])
        self.assertEqual([[('numa1', 'VCPU', 1)]], named(result))
        self.assertEqual({'_COMPUTE': [uid('numa1')],
                          '_NUMA': [uid('numa1')],
                          '_NIC': [uid('pf1')]},
                         result.candidates[0].mapping_dict())

    def test_member_of_root_counts_for_unsuffixed_group_only(self):
        result, _ = run(numa_with_pfs(), [('resources', 'VCPU:1'),
                                          ('member_of', AGG_A)])
        self.assertEqual(2, len(result.candidates))
        result, _ = run(numa_with_pfs(), [('resources1', 'VCPU:1'),
                                          ('member_of1', AGG_A)])
        self.assertEqual([], result.candidates)

    def test_root_traits_do_not_count_unless_root_supplies(self):
        result, _ = run(numa_with_pfs(), [('resources', 'VCPU:1'),
                                          ('required', 'HW_CPU_X86_AVX2')])
        self.assertEqual([], result.candidates)
        result, _ = run(numa_with_pfs(), [('resources', 'VCPU:1,DISK_GB:1'),
                                          ('required', 'HW_CPU_X86_AVX2')])
        self.assertEqual(2, len(result.candidates))

    def test_root_required(self):
        snap = (CloudBuilder()
                .add('cn1', inv={'VCPU': 4}, traits=['HW_CPU_X86_AVX2'])
                .add('cn2', inv={'VCPU': 4},
                     traits=['COMPUTE_STATUS_DISABLED'])
                .snapshot())
        result, _ = run(snap, [('resources', 'VCPU:1'),
                               ('root_required', 'HW_CPU_X86_AVX2')])
        self.assertEqual([[('cn1', 'VCPU', 1)]], named(result))
        result, _ = run(snap, [('resources', 'VCPU:1'),
                               ('root_required', '!COMPUTE_STATUS_DISABLED')])
        self.assertEqual([[('cn1', 'VCPU', 1)]], named(result))

    def test_any_traits(self):
        result, _ = run(numa_with_pfs(),
                        [('resources1', 'SRIOV_NET_VF:1'),
                         ('required1', 'in:CUSTOM_PHYSNET1,CUSTOM_PHYSNET2')])
        self.assertEqual(2, len(result.candidates))
        result, _ = run(numa_with_pfs(),
                        [('resources1', 'SRIOV_NET_VF:1'),
                         ('required1', 'in:CUSTOM_PHYSNET1,CUSTOM_PHYSNET2'),
                         ('required1', '!CUSTOM_PHYSNET2')])
        self.assertEqual([[('pf0', 'SRIOV_NET_VF', 1)]], named(result))


def two_pfs(total=2, max_unit=None):
    inv = cn.Inventory(total=total, max_unit=max_unit or total)
    return (CloudBuilder()
            .add('cn', inv={'VCPU': 4})
            .add('pf0', parent='cn', inv={'SRIOV_NET_VF': inv})
            .add('pf1', parent='cn', inv={'SRIOV_NET_VF': inv})
            .snapshot())


class TestGranular(testtools.TestCase):

    def pairs(self, policy):
        return [('resources1', 'SRIOV_NET_VF:1'),
                ('resources2', 'SRIOV_NET_VF:1'), ('group_policy', policy)]

    def test_isolate(self):
        result, _ = run(two_pfs(), self.pairs('isolate'))
        self.assertEqual(2, len(result.candidates))
        for cand in result.candidates:
            mapped = cand.mapping_dict()
            self.assertNotEqual(mapped['1'], mapped['2'])

    def test_none_allows_same_provider_with_summed_amounts(self):
        result, _ = run(two_pfs(), self.pairs('none'))
        self.assertEqual([[('pf0', 'SRIOV_NET_VF', 1), ('pf1',
                                                        'SRIOV_NET_VF', 1)],
                          [('pf0', 'SRIOV_NET_VF', 1), ('pf1',
                                                        'SRIOV_NET_VF', 1)],
                          [('pf0', 'SRIOV_NET_VF', 2)],
                          [('pf1', 'SRIOV_NET_VF', 2)]], named(result))

    def test_summed_amount_over_capacity_dropped(self):
        result, _ = run(two_pfs(total=1), self.pairs('none'))
        self.assertEqual(2, len(result.candidates))

    def test_summed_amount_over_max_unit_dropped(self):
        result, _ = run(two_pfs(total=4, max_unit=1), self.pairs('none'))
        self.assertEqual(2, len(result.candidates))

    def test_three_groups_one_provider(self):
        snap = (CloudBuilder()
                .add('gpu', inv={'VGPU': cn.Inventory(total=4, max_unit=3)})
                .snapshot())
        pairs = [('resources', 'VGPU:1'), ('resources1', 'VGPU:1'),
                 ('resources2', 'VGPU:1'), ('group_policy', 'none')]
        result, _ = run(snap, pairs)
        self.assertEqual([[('gpu', 'VGPU', 3)]], named(result))
        self.assertEqual({'': [uid('gpu')], '1': [uid('gpu')],
                          '2': [uid('gpu')]},
                         result.candidates[0].mapping_dict())
        result, _ = run(snap, pairs[:1] + [('resources1', 'VGPU:2')] +
                        pairs[2:])
        self.assertEqual([], result.candidates)

    def test_capacity_uses_reserved_ratio_and_usage(self):
        inv = cn.Inventory(total=10, reserved=2, allocation_ratio=1.5)
        snap = (CloudBuilder()
                .add('cn', inv={'VCPU': inv}, used={'VCPU': 10})
                .snapshot())
        self.assertEqual(1, len(run(snap, [('resources', 'VCPU:2')])[0]
                                .candidates))
        self.assertEqual([], run(snap, [('resources', 'VCPU:3')])[0]
                         .candidates)

    def test_min_unit_and_step_size(self):
        inv = cn.Inventory(total=100, min_unit=10, step_size=5)
        snap = CloudBuilder().add('cn', inv={'DISK_GB': inv}).snapshot()
        for amount, count in [(5, 0), (10, 1), (12, 0), (15, 1)]:
            result, _ = run(snap, [('resources', 'DISK_GB:%d' % amount)])
            self.assertEqual(count, len(result.candidates), amount)


def wide_tree(children=8):
    builder = CloudBuilder().add('root', inv={'VCPU': 8})
    for i in range(children):
        builder.add('child%d' % i, parent='root', inv={'CUSTOM_X': 1})
    return builder.snapshot()


def single_unit_groups(count, policy='none'):
    return [('resources%d' % i, 'CUSTOM_X:1') for i in range(1, count + 1)
            ] + [('group_policy', policy)]


class TestWideTree(testtools.TestCase):
    """One root, 8 children with 1 unit each: 8**8 raw products."""

    def test_limit_returns_promptly(self):
        result, _ = run(wide_tree(), single_unit_groups(8) +
                        [('limit', '10')])
        self.assertEqual(10, len(result.candidates))
        self.assertEqual(9, len(result.summary_providers))

    def test_every_candidate_of_six_groups(self):
        # Each group needs its own child: 8 * 7 * 6 * 5 * 4 * 3 answers.
        result, _ = run(wide_tree(), single_unit_groups(6, 'isolate'))
        self.assertEqual(20160, len(result.candidates))

    def test_constrained_group_walked_first(self):
        # Only child0 has the trait group 8 needs; the other seven groups
        # share the remaining seven children: 7! answers.
        builder = CloudBuilder().add('root', inv={'VCPU': 8})
        for i in range(8):
            builder.add('child%d' % i, parent='root', inv={'CUSTOM_X': 1},
                        traits=['CUSTOM_T'] if i == 0 else [])
        pairs = single_unit_groups(8) + [('required8', 'CUSTOM_T')]
        result, _ = run(builder.snapshot(), pairs + [('limit', '5')])
        self.assertEqual(5, len(result.candidates))
        result, _ = run(builder.snapshot(), pairs)
        self.assertEqual(5040, len(result.candidates))
        for cand in result.candidates:
            self.assertEqual([uid('child0')], cand.mapping_dict()['8'])

    def test_unsuffixed_group_over_many_classes_stops_at_limit(self):
        # 8 ** 6 spreads of six classes over eight children; only ten are
        # built.
        classes = ['CUSTOM_%s' % c for c in 'ABCDEF']
        builder = CloudBuilder().add('root')
        for i in range(8):
            builder.add('child%d' % i, parent='root',
                        inv={rc: 1 for rc in classes},
                        traits=['CUSTOM_T'] if i == 7 else [])
        pairs = [('resources', ','.join(rc + ':1' for rc in classes)),
                 ('required', 'CUSTOM_T'), ('limit', '10')]
        result, _ = run(builder.snapshot(), pairs)
        self.assertEqual(10, len(result.candidates))
        for cand in result.candidates:
            self.assertIn(uid('child7'), cand.mapping_dict()[''])

    def test_more_groups_than_children_is_empty(self):
        result, _ = run(wide_tree(), single_unit_groups(9))
        self.assertEqual([], result.candidates)


def two_hosts():
    return (CloudBuilder()
            .add('cn1', inv={'SRIOV_NET_VF': 4})
            .add('cn2', inv={'SRIOV_NET_VF': 4})
            .snapshot())


class TestOptions(testtools.TestCase):

    pairs = [('resources1', 'SRIOV_NET_VF:1'),
             ('resources2', 'SRIOV_NET_VF:1'), ('group_policy', 'none')]

    def anchors_of(self, result):
        return [c.resource_providers()[0] for c in result.candidates]

    def test_depth_first_fills_from_first_anchor(self):
        result, _ = run(two_hosts(), self.pairs, max_candidates=1)
        self.assertEqual(1, len(result.candidates))
        result, _ = run(two_hosts(), self.pairs + [('limit', '1')])
        self.assertEqual(1, len(result.candidates))

    def test_breadth_first_alternates_anchors(self):
        result, _ = run(two_hosts(), self.pairs, max_candidates=2,
                        strategy=cq.BREADTH_FIRST)
        self.assertEqual({uid('cn1'), uid('cn2')},
                         set(self.anchors_of(result)))

    def test_depth_first_cap_stays_in_one_tree(self):
        result, _ = run(two_hosts(), self.pairs, max_candidates=1,
                        strategy=cq.DEPTH_FIRST)
        self.assertEqual(1, len(set(self.anchors_of(result))))

    def test_max_zero_still_yields_one(self):
        result, _ = run(two_hosts(), self.pairs, max_candidates=0)
        self.assertEqual(1, len(result.candidates))

    def test_round_robin_order_is_upstreams(self):
        order = cs._round_robin(iter(x) for x in ['ABC', 'D', '', 'EF'])
        self.assertEqual('ADEBFC', ''.join(order))

    def test_unknown_strategy(self):
        self.assertRaises(ValueError, run, two_hosts(), self.pairs,
                          strategy='sideways')

    def test_random_sample_from_whole_set(self):
        seen = set()
        for seed in range(20):
            result, _ = run(two_hosts(), [('resources', 'SRIOV_NET_VF:1'),
                                          ('limit', '1')],
                            randomize=True, rng=random.Random(seed))
            self.assertEqual(1, len(result.candidates))
            self.assertEqual(1, len(result.summary_providers))
            seen |= set(self.anchors_of(result))
        self.assertEqual({uid('cn1'), uid('cn2')}, seen)

    def test_limit_restricts_summaries_to_kept_trees(self):
        result, _ = run(two_hosts(), [('resources', 'SRIOV_NET_VF:1'),
                                      ('limit', '1')])
        self.assertEqual(set(self.anchors_of(result)),
                         result.summary_providers)


class TestSnapshotNeeds(testtools.TestCase):

    def test_slice(self):
        request = rg.parse_candidate_request(
            [('resources', 'VCPU:2,DISK_GB:10'), ('resources1', 'VCPU:1'),
             ('required1', 'in:CUSTOM_A,CUSTOM_B'), ('member_of', AGG_A),
             ('in_tree1', uid('cn1')), ('required2', 'CUSTOM_C'),
             ('same_subtree', '1,2'), ('group_policy', 'none')], (1, 39))
        needs = cq.snapshot_needs(request)
        self.assertEqual({'VCPU': 1, 'DISK_GB': 10}, needs.min_amounts)
        self.assertEqual({'CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C', SHARES},
                         set(needs.traits))
        self.assertEqual({AGG_A}, set(needs.aggregates))
        self.assertEqual({uid('cn1')}, set(needs.in_tree))
        self.assertTrue(needs.positive_filter_providers)

    def test_unknown_in_tree_is_empty(self):
        result, _ = run(shared_storage(), [('resources', 'VCPU:1'),
                                           ('in_tree', uid('nowhere'))])
        self.assertEqual([], result.candidates)


class TestResponse(testtools.TestCase):

    def body(self, version, pairs=(('resources', 'VCPU:1,DISK_GB:100'),)):
        snap = shared_storage()
        request = rg.parse_candidate_request(list(pairs), version)
        result = cs.search(snap, request)
        return sent_body(result, request, snap)

    def test_list_form_before_1_12(self):
        body = self.body((1, 10))
        self.assertEqual(['allocation_requests', 'provider_summaries'],
                         list(body))
        allocation = body['allocation_requests'][0]['allocations'][0]
        self.assertEqual(['resource_provider', 'resources'], list(allocation))
        self.assertEqual({'resources': {'VCPU': {'capacity': 8, 'used': 0}}},
                         body['provider_summaries'][uid('cn1')])

    def test_dict_form_and_traits(self):
        body = self.body((1, 17))
        request = body['allocation_requests'][0]
        self.assertEqual(['allocations'], list(request))
        self.assertEqual({'resources': {'DISK_GB': 100}},
                         request['allocations'][uid('ss')])
        self.assertEqual(['resources', 'traits'],
                         list(body['provider_summaries'][uid('ss')]))
        self.assertEqual([SHARES, 'STORAGE_DISK_SSD'],
                         body['provider_summaries'][uid('ss')]['traits'])

    def test_all_classes_from_1_27(self):
        summary = self.body((1, 27))['provider_summaries'][uid('cn1')]
        self.assertEqual({'VCPU', 'MEMORY_MB'}, set(summary['resources']))
        summary = self.body((1, 26))['provider_summaries'][uid('cn1')]
        self.assertEqual({'VCPU'}, set(summary['resources']))

    def test_tree_fields_from_1_29(self):
        summary = self.body((1, 29))['provider_summaries'][uid('cn1')]
        self.assertEqual(['resources', 'traits', 'parent_provider_uuid',
                          'root_provider_uuid'], list(summary))
        self.assertIsNone(summary['parent_provider_uuid'])
        self.assertEqual(uid('cn1'), summary['root_provider_uuid'])

    def test_mappings_from_1_34(self):
        self.assertNotIn('mappings',
                         self.body((1, 33))['allocation_requests'][0])
        request = self.body((1, 34))['allocation_requests'][0]
        self.assertEqual(['allocations', 'mappings'], list(request))
        self.assertEqual([''], list(request['mappings']))
        self.assertEqual(2, len(request['mappings']['']))

    def test_empty(self):
        body = self.body((1, 39), [('resources', 'VGPU:1')])
        self.assertEqual({'allocation_requests': [],
                          'provider_summaries': {}}, body)

    def test_summary_of_provider_without_inventory(self):
        snap = numa_with_pfs()
        request = rg.parse_candidate_request(
            [('resources', 'SRIOV_NET_VF:1')], (1, 29))
        result = cs.search(snap, request)
        body = sent_body(result, request, snap)
        self.assertEqual(5, len(body['provider_summaries']))
        self.assertEqual({'DISK_GB': {'capacity': 100, 'used': 0}},
                         body['provider_summaries'][uid('cn')]['resources'])


class TestSnapshotRows(testtools.TestCase):

    def test_root_without_root_uuid_is_its_own_root(self):
        snap = cn.Snapshot.from_rows(
            [('r', 'r', 0, None, None), ('c', 'c', 0, 'r', 'r')],
            [('c', 'VCPU', 4, 0, 1, 4, 1, 1.0, 0)])
        request = rg.parse_candidate_request([('resources', 'VCPU:1')],
                                             (1, 39))
        result = cs.search(snap, request)
        self.assertEqual({'r', 'c'}, result.summary_providers)
        body = sent_body(result, request, snap)
        self.assertEqual('r', body['provider_summaries']['r'][
            'root_provider_uuid'])
