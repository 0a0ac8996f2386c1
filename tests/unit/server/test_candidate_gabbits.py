# SPDX-License-Identifier: Apache-2.0
"""Upstream's granular gabbits (GranularFixture), replayed on the search.

Expected counts and amounts are those of upstream's functional tests
(placement/tests/functional/gabbits/granular.yaml and
allocation-candidates-mappings-sharing.yaml); the layout is the fixture's.
"""

import testtools

from osc_placement.server.candidates import search as cs
from osc_placement.server.candidates import snapshot as cns
from osc_placement.server.schemas import request_groups as rg
from tests.unit.server.test_candidate_examples import CloudBuilder
from tests.unit.server.test_candidate_examples import sent_body
from tests.unit.server.test_candidate_examples import uid

AGG_A = 'aaaaaaaa-0000-4000-8000-0000000000a1'
AGG_B = 'aaaaaaaa-0000-4000-8000-0000000000b1'
AGG_C = 'aaaaaaaa-0000-4000-8000-0000000000c1'
SHARES = cns.SHARING_TRAIT
NAMES = ['cn_left', 'cn_middle', 'cn_right', 'shr_disk_1', 'shr_disk_2',
         'shr_net']


def granular_fixture():
    return (CloudBuilder()
            .add('cn_left', aggs=[AGG_A],
                 inv={'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 500,
                      'VGPU': 8, 'SRIOV_NET_VF': 8,
                      'CUSTOM_NET_MBPS': 4000},
                 traits=['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2',
                         'HW_GPU_API_DXVA', 'HW_NIC_DCB_PFC', 'CUSTOM_FOO'])
            .add('cn_middle', aggs=[AGG_A, AGG_B],
                 inv={'VCPU': 8, 'MEMORY_MB': 4096, 'SRIOV_NET_VF': 8,
                      'CUSTOM_NET_MBPS': 4000},
                 traits=['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2',
                         'HW_CPU_X86_SSE', 'HW_NIC_ACCEL_TLS'])
            .add('cn_right', aggs=[AGG_B, AGG_C],
                 inv={'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 500,
                      'VGPU': cns.Inventory(total=8, max_unit=2)},
                 traits=['HW_CPU_X86_MMX', 'HW_GPU_API_DXVA',
                         'CUSTOM_DISK_SSD'])
            .add('shr_disk_1', aggs=[AGG_A], inv={'DISK_GB': 1000},
                 traits=[SHARES, 'CUSTOM_DISK_SSD'])
            .add('shr_disk_2', aggs=[AGG_A, AGG_B], inv={'DISK_GB': 1000},
                 traits=[SHARES])
            .add('shr_net', aggs=[AGG_C],
                 inv={'SRIOV_NET_VF': 16, 'CUSTOM_NET_MBPS': 40000},
                 traits=[SHARES])
            .snapshot())


def names(uuids):
    by_uuid = {uid(name): name for name in NAMES}
    return {by_uuid[u] for u in uuids}


class AnyOrder(list):
    """A list equal to any list with the same items in any order."""

    def __eq__(self, other):
        return sorted(map(_canonical, self)) == sorted(map(_canonical, other))

    __hash__ = None


def _canonical(candidate):
    return repr([(name, sorted(resources.items()))
                 for name, resources in candidate])


def allocations(result):
    """Each candidate as [(provider name, {class: amount})], by name."""
    by_uuid = {uid(name): name for name in NAMES}
    return AnyOrder(sorted(((by_uuid[u], dict(resources))
                            for u, resources in cand.allocations),
                           key=lambda item: item[0])
                    for cand in result.candidates)


class TestGranularGabbits(testtools.TestCase):

    def get(self, pairs, version=(1, 25)):
        request = rg.parse_candidate_request(pairs, version)
        return cs.search(granular_fixture(), request)

    def test_different_groups_hit_with_none(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'MEMORY_MB:1024'),
                           ('group_policy', 'none')])
        self.assertEqual(
            [[('cn_left', {'VCPU': 1, 'MEMORY_MB': 1024})],
             [('cn_middle', {'VCPU': 1, 'MEMORY_MB': 1024})],
             [('cn_right', {'VCPU': 1, 'MEMORY_MB': 1024})]],
            allocations(result))
        self.assertEqual(3, len(result.summary_providers))

    def test_different_groups_miss_with_isolate(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'MEMORY_MB:1024'),
                           ('group_policy', 'isolate'),
                           ('group_policy', 'none')])
        self.assertEqual([], result.candidates)
        self.assertEqual(set(), result.summary_providers)

    def test_resources_combine(self):
        result = self.get([('resources', 'VCPU:3,MEMORY_MB:512'),
                           ('resources1', 'VCPU:1,MEMORY_MB:1024'),
                           ('resources2', 'VCPU:2'),
                           ('group_policy', 'none')])
        self.assertEqual(3, len(result.candidates))
        for cand in result.candidates:
            self.assertEqual([{'VCPU': 6, 'MEMORY_MB': 1536}],
                             list(cand.allocation_dict().values()))

    def test_group_policy_not_required_with_one_numbered_group(self):
        result = self.get([('resources', 'VCPU:1'),
                           ('resources1', 'MEMORY_MB:2048')])
        self.assertEqual(3, len(result.candidates))

    def test_disk_sharing_isolated(self):
        result = self.get([('resources1', 'VCPU:1,MEMORY_MB:1024'),
                           ('resources2', 'DISK_GB:100'),
                           ('group_policy', 'isolate')])
        self.assertEqual(5, len(result.candidates))
        self.assertEqual(5, len(result.summary_providers))

    def test_disk_sharing_non_isolated(self):
        result = self.get([('resources1', 'VCPU:1,MEMORY_MB:1024'),
                           ('resources2', 'DISK_GB:100'),
                           ('group_policy', 'none')])
        self.assertEqual(7, len(result.candidates))
        self.assertEqual(5, len(result.summary_providers))

    def test_disk_alone(self):
        for key in ('resources1', 'resources'):
            result = self.get([(key, 'DISK_GB:800')])
            self.assertEqual([[('shr_disk_1', {'DISK_GB': 800})],
                              [('shr_disk_2', {'DISK_GB': 800})]],
                             allocations(result))
            self.assertEqual({'shr_disk_1', 'shr_disk_2'},
                             names(result.summary_providers))

    def test_isolated_ssd(self):
        result = self.get([('resources1', 'VCPU:1,MEMORY_MB:1024'),
                           ('resources2', 'DISK_GB:100'),
                           ('required2', 'CUSTOM_DISK_SSD'),
                           ('group_policy', 'isolate')])
        self.assertEqual(
            [[('cn_left', {'VCPU': 1, 'MEMORY_MB': 1024}),
              ('shr_disk_1', {'DISK_GB': 100})],
             [('cn_middle', {'VCPU': 1, 'MEMORY_MB': 1024}),
              ('shr_disk_1', {'DISK_GB': 100})]], allocations(result))
        self.assertEqual({'cn_left', 'cn_middle', 'shr_disk_1'},
                         names(result.summary_providers))

    def test_no_isolation_forbid_ssd(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'DISK_GB:100'),
                           ('required2', '!CUSTOM_DISK_SSD'),
                           ('group_policy', 'none')], (1, 25))
        self.assertEqual(
            [[('cn_left', {'VCPU': 1, 'DISK_GB': 100})],
             [('cn_left', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})],
             [('cn_middle', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})],
             [('cn_right', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})]],
            allocations(result))
        self.assertEqual({'cn_left', 'cn_middle', 'cn_right', 'shr_disk_2'},
                         names(result.summary_providers))

    def test_member_of_filters(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'DISK_GB:100'),
                           ('member_of2', AGG_C), ('group_policy', 'none')])
        self.assertEqual([[('cn_right', {'VCPU': 1, 'DISK_GB': 100})]],
                         allocations(result))
        self.assertEqual({'cn_right'}, names(result.summary_providers))

    def test_required_forbidden_member_of_in(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('required1', '!HW_CPU_X86_SSE'),
                           ('resources2', 'DISK_GB:100'),
                           ('required2', 'CUSTOM_DISK_SSD'),
                           ('member_of2', 'in:%s,%s' % (AGG_A, AGG_C)),
                           ('group_policy', 'none')])
        self.assertEqual(
            [[('cn_left', {'VCPU': 1}), ('shr_disk_1', {'DISK_GB': 100})],
             [('cn_right', {'VCPU': 1, 'DISK_GB': 100})]],
            allocations(result))
        self.assertEqual({'cn_left', 'cn_right', 'shr_disk_1'},
                         names(result.summary_providers))

    def test_multiple_member_of(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'DISK_GB:100'),
                           ('member_of2', AGG_A),
                           ('member_of2', 'in:%s,%s' % (AGG_B, AGG_C)),
                           ('group_policy', 'isolate')])
        self.assertEqual(
            [[('cn_left', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})],
             [('cn_middle', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})],
             [('cn_right', {'VCPU': 1}), ('shr_disk_2', {'DISK_GB': 100})]],
            allocations(result))
        self.assertEqual(4, len(result.summary_providers))

    def test_multiple_disks_multiple_networks(self):
        result = self.get([('resources1', 'VCPU:1'),
                           ('resources2', 'VGPU:1'),
                           ('required2', 'HW_GPU_API_DXVA'),
                           ('resources3', 'MEMORY_MB:1024'),
                           ('resources4', 'DISK_GB:100'),
                           ('required4', 'CUSTOM_DISK_SSD'),
                           ('resources5', 'DISK_GB:50'),
                           ('required5', '!CUSTOM_DISK_SSD'),
                           ('resources6',
                            'SRIOV_NET_VF:1,CUSTOM_NET_MBPS:1000'),
                           ('resources7',
                            'SRIOV_NET_VF:2,CUSTOM_NET_MBPS:2000'),
                           ('group_policy', 'none')])
        net = {'SRIOV_NET_VF': 3, 'CUSTOM_NET_MBPS': 3000}
        compute = {'VCPU': 1, 'MEMORY_MB': 1024, 'VGPU': 1}
        self.assertEqual(
            [[('cn_left', dict(compute, DISK_GB=50, **net)),
              ('shr_disk_1', {'DISK_GB': 100})],
             [('cn_left', dict(compute, **net)),
              ('shr_disk_1', {'DISK_GB': 100}),
              ('shr_disk_2', {'DISK_GB': 50})],
             [('cn_right', dict(compute, DISK_GB=100)),
              ('shr_disk_2', {'DISK_GB': 50}), ('shr_net', net)]],
            allocations(result))
        self.assertEqual(5, len(result.summary_providers))

    def test_combining_groups_exceeds_capacity(self):
        result = self.get([('resources',
                            'VCPU:2,MEMORY_MB:2048,SRIOV_NET_VF:1,'
                            'CUSTOM_NET_MBPS:2000'),
                           ('resources1',
                            'SRIOV_NET_VF:1,CUSTOM_NET_MBPS:3000')])
        self.assertEqual(
            [[('cn_right', {'VCPU': 2, 'MEMORY_MB': 2048}),
              ('shr_net', {'SRIOV_NET_VF': 2, 'CUSTOM_NET_MBPS': 5000})]],
            allocations(result))
        self.assertEqual({'cn_right', 'shr_net'},
                         names(result.summary_providers))

    def test_combining_groups_exceeds_max_unit(self):
        result = self.get([('resources', 'VGPU:1'), ('resources1', 'VGPU:1'),
                           ('resources2', 'VGPU:1'), ('group_policy', 'none')])
        self.assertEqual([[('cn_left', {'VGPU': 3})]], allocations(result))


class TestMappingsSharingGabbits(testtools.TestCase):

    def get(self, pairs):
        request = rg.parse_candidate_request(pairs, (1, 34))
        return cs.search(granular_fixture(), request)

    def test_simple_mapping_non_granular(self):
        result = self.get([('resources', 'VCPU:1'),
                           ('required', 'HW_CPU_X86_SSE')])
        self.assertEqual(1, len(result.candidates))
        self.assertEqual({'': [uid('cn_middle')]},
                         result.candidates[0].mapping_dict())

    def test_simple_mapping_with_shared(self):
        result = self.get([('resources', 'VCPU:1,DISK_GB:1'),
                           ('required', 'HW_CPU_X86_SSE')])
        self.assertEqual(2, len(result.candidates))
        self.assertEqual(3, len(result.summary_providers))
        for cand in result.candidates:
            self.assertEqual(2, len(cand.mapping_dict()['']))

    def test_group_mapping_with_shared(self):
        result = self.get([('resources', 'VCPU:1'),
                           ('resources_DISK_A', 'DISK_GB:1'),
                           ('resources_DISK_B', 'DISK_GB:1'),
                           ('required', 'HW_CPU_X86_SSE'),
                           ('group_policy', 'isolate')])
        self.assertEqual(2, len(result.candidates))
        self.assertEqual(3, len(result.summary_providers))
        disks = {uid('shr_disk_1'), uid('shr_disk_2')}
        for cand in result.candidates:
            mapping = cand.mapping_dict()
            self.assertEqual([uid('cn_middle')], mapping[''])
            self.assertEqual(disks, set(mapping['_DISK_A'] +
                                        mapping['_DISK_B']))


def numa_network_fixture():
    builder = CloudBuilder()
    builder.add('ss1', aggs=[AGG_A], inv={'DISK_GB': 2000}, traits=[SHARES])
    builder.add('cn1', aggs=[AGG_A], traits=['COMPUTE_VOLUME_MULTI_ATTACH'])
    builder.add('numa0', parent='cn1', traits=['HW_NUMA_ROOT'],
                inv={'VCPU': 4, 'MEMORY_MB': cns.Inventory(
                    total=2048, min_unit=512, step_size=256)},
                used={'VCPU': 2})
    builder.add('numa1', parent='cn1', traits=['HW_NUMA_ROOT', 'CUSTOM_FOO'],
                inv={'VCPU': 4, 'MEMORY_MB': cns.Inventory(
                    total=2048, min_unit=256, max_unit=1024)})
    builder.add('fpga0', parent='numa0', inv={'CUSTOM_FPGA': 1})
    builder.add('pgpu0', parent='numa0', inv={'VGPU': 8})
    builder.add('fpga1_0', parent='numa1', inv={'CUSTOM_FPGA': 1})
    builder.add('fpga1_1', parent='numa1', inv={'CUSTOM_FPGA': 1})
    builder.add('sriov_agent', parent='cn1',
                traits=['CUSTOM_VNIC_TYPE_DIRECT'])
    for i in (1, 2):
        builder.add('esn%d' % i, parent='sriov_agent',
                    traits=['CUSTOM_PHYSNET%d' % i],
                    inv={'NET_BW_EGR_KILOBIT_PER_SEC': 10000 * i})
    builder.add('ovs_agent', parent='cn1', traits=['CUSTOM_VNIC_TYPE_NORMAL'])
    builder.add('br_int', parent='ovs_agent', traits=['CUSTOM_PHYSNET0'],
                inv={'NET_BW_EGR_KILOBIT_PER_SEC': 1000})
    builder.add('cn2', aggs=[AGG_A], traits=['CUSTOM_FOO'], used={'VCPU': 3},
                inv={'VCPU': 8, 'DISK_GB': 1000, 'MEMORY_MB': cns.Inventory(
                    total=2048, min_unit=1024, step_size=128)})
    for i in (1, 2, 3):
        builder.add('nic%d' % i, parent='cn2', traits=['CUSTOM_HW_NIC_ROOT'])
    for i in (1, 2):
        builder.add('pf1_%d' % i, parent='nic1', inv={'CUSTOM_VF': 4},
                    traits=['CUSTOM_PHYSNET%d' % i])
    for i in range(4):
        builder.add('pf2_%d' % (i + 1), parent='nic2', inv={'CUSTOM_VF': 2},
                    traits=['CUSTOM_PHYSNET%d' % (i % 2 + 1)])
    builder.add('pf3_1', parent='nic3', inv={'CUSTOM_VF': 8},
                traits=['CUSTOM_PHYSNET1'])
    return builder.snapshot()


class TestGranularSameSubtreeGabbits(testtools.TestCase):
    """granular-same-subtree.yaml on NUMANetworkFixture, at 1.36."""

    def get(self, pairs):
        request = rg.parse_candidate_request(pairs, (1, 36))
        return cs.search(numa_network_fixture(), request)

    def count(self, pairs):
        return len(self.get(pairs).candidates)

    def test_no_resourceless(self):
        base = [('resources_COMPUTE', 'VCPU:1'),
                ('resources_ACCEL', 'CUSTOM_FPGA:1'),
                ('group_policy', 'none')]
        self.assertEqual(6, self.count(base))
        self.assertEqual(6, self.count(base + [('same_subtree',
                                                '_COMPUTE')]))
        self.assertEqual(3, self.count(base + [('same_subtree',
                                                '_COMPUTE,_ACCEL')]))

    def test_same_subtree_same_provider(self):
        base = [('resources_COMPUTE1', 'VCPU:1'),
                ('resources_COMPUTE2', 'MEMORY_MB:1024'),
                ('same_subtree', '_COMPUTE1,_COMPUTE2')]
        result = self.get(base + [('group_policy', 'none')])
        self.assertEqual({uid('numa0'), uid('numa1'), uid('cn2')},
                         {c.resource_providers()[0]
                          for c in result.candidates})
        self.assertEqual(3, len(result.candidates))
        self.assertEqual(0, self.count(base + [('group_policy', 'isolate')]))

    def test_resourceful_without_same_subtree(self):
        self.assertEqual(2, self.count(
            [('resources', 'VCPU:1'),
             ('resources_PORT1', 'CUSTOM_VF:4'),
             ('required_PORT1', 'CUSTOM_PHYSNET1'),
             ('resources_PORT2', 'CUSTOM_VF:4'),
             ('required_PORT2', 'CUSTOM_PHYSNET2'),
             ('group_policy', 'none')]))

    def ports(self, amounts, policy):
        pairs = [('resources', 'VCPU:1'),
                 ('required_NIC', 'CUSTOM_HW_NIC_ROOT')]
        suffixes = ['_NIC']
        for suffix, (amount, net) in amounts.items():
            pairs += [('resources' + suffix, 'CUSTOM_VF:%d' % amount),
                      ('required' + suffix, 'CUSTOM_PHYSNET%d' % net)]
            suffixes.append(suffix)
        return pairs + [('same_subtree', ','.join(suffixes)),
                        ('group_policy', policy)]

    def test_resourceless_nic_4vfs(self):
        result = self.get(self.ports({'_PORT1': (4, 1), '_PORT2': (4, 2)},
                                     'none'))
        self.assertEqual(1, len(result.candidates))
        self.assertEqual({'': [uid('cn2')], '_NIC': [uid('nic1')],
                          '_PORT1': [uid('pf1_1')],
                          '_PORT2': [uid('pf1_2')]},
                         result.candidates[0].mapping_dict())

    def test_resourceless_nic_2vfs(self):
        for policy in ('none', 'isolate'):
            self.assertEqual(5, self.count(self.ports(
                {'_PORT1': (2, 1), '_PORT2': (2, 2)}, policy)))

    def test_resourceless_nic_2_1_1_vfs(self):
        ports = {'_PORT1': (2, 1), '_PORT2A': (1, 2), '_PORT2B': (1, 2)}
        self.assertEqual(9, self.count(self.ports(ports, 'none')))
        self.assertEqual(4, self.count(self.ports(ports, 'isolate')))

    def test_resourceless_same_provider(self):
        base = [('resources_PORT1', 'CUSTOM_VF:8'),
                ('required_PORT2', 'CUSTOM_PHYSNET1'),
                ('same_subtree', '_PORT1,_PORT2')]
        result = self.get(base + [('group_policy', 'none')])
        self.assertEqual({'_PORT1': [uid('pf3_1')],
                          '_PORT2': [uid('pf3_1')]},
                         result.candidates[0].mapping_dict())
        self.assertEqual(1, len(result.candidates))
        self.assertEqual(0, self.count(base + [('group_policy', 'isolate')]))

    def test_multiple_resourceless_same_provider(self):
        base = [('resources_COMPUTE1', 'VCPU:1'),
                ('required_COMPUTE2', 'CUSTOM_FOO'),
                ('required_COMPUTE3', 'HW_NUMA_ROOT'),
                ('same_subtree', '_COMPUTE1,_COMPUTE2,_COMPUTE3')]
        result = self.get(base + [('group_policy', 'none')])
        self.assertEqual(1, len(result.candidates))
        self.assertEqual([uid('numa1')],
                         result.candidates[0].resource_providers())
        self.assertEqual(0, self.count(base + [('group_policy', 'isolate')]))

    def test_resourceless_numa_two_fpgas(self):
        base = [('resources_ACCEL1', 'CUSTOM_FPGA:1'),
                ('resources_ACCEL2', 'CUSTOM_FPGA:1'),
                ('group_policy', 'isolate')]
        self.assertEqual(2, self.count(
            base + [('required_NUMA', 'HW_NUMA_ROOT'),
                    ('same_subtree', '_NUMA,_ACCEL1,_ACCEL2')]))
        self.assertEqual(2, self.count(
            base + [('required_NUMA', 'HW_NUMA_ROOT'),
                    ('same_subtree', '_NUMA,_ACCEL1,_ACCEL2,_NUMA,_ACCEL1')]))
        self.assertEqual(0, self.count(
            base + [('required_NUMA', 'HW_NUMA_ROOT,!CUSTOM_FOO'),
                    ('same_subtree', '_NUMA,_ACCEL1,_ACCEL2')]))

    def test_multiple_same_subtree_params(self):
        result = self.get([
            ('required_NUMA', 'HW_NUMA_ROOT'),
            ('resources_COMPUTE', 'VCPU:2,MEMORY_MB:512'),
            ('resources_FPGA', 'CUSTOM_FPGA:1'),
            ('resources_GPU', 'VGPU:1'),
            ('required_SRIOV', 'CUSTOM_VNIC_TYPE_DIRECT'),
            ('resources_NET1', 'NET_BW_EGR_KILOBIT_PER_SEC:100'),
            ('required_NET1', 'CUSTOM_PHYSNET1'),
            ('resources_NET2', 'NET_BW_EGR_KILOBIT_PER_SEC:100'),
            ('required_NET2', 'CUSTOM_PHYSNET2'),
            ('same_subtree', '_NUMA,_COMPUTE,_GPU,_FPGA'),
            ('same_subtree', '_SRIOV,_NET1,_NET2'),
            ('group_policy', 'none')])
        self.assertEqual(1, len(result.candidates))
        self.assertEqual(
            {'_NUMA': [uid('numa0')], '_COMPUTE': [uid('numa0')],
             '_FPGA': [uid('fpga0')], '_GPU': [uid('pgpu0')],
             '_SRIOV': [uid('sriov_agent')], '_NET1': [uid('esn1')],
             '_NET2': [uid('esn2')]},
            result.candidates[0].mapping_dict())
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512},
                         result.candidates[0].allocation_dict()[uid('numa0')])


def shared_storage_fixture():
    """SharedStorageFixture as allocation-candidates.yaml knows it: two
    computes (cn2 with local disk), one sharing disk, NUMA nodes with PFs."""
    builder = CloudBuilder()
    for cn in ('cn1', 'cn2'):
        inv = {'VCPU': cns.Inventory(total=24, allocation_ratio=16.0),
               'MEMORY_MB': cns.Inventory(total=128 * 1024,
                                          allocation_ratio=1.5)}
        traits = []
        if cn == 'cn2':
            inv['DISK_GB'] = cns.Inventory(total=2000, reserved=100)
        else:
            traits = ['HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2']
        builder.add(cn, aggs=[AGG_A], inv=inv, traits=traits)
    builder.add('ss', aggs=[AGG_A], traits=[SHARES],
                inv={'DISK_GB': cns.Inventory(total=2000, reserved=100)})
    for n in (1, 2):
        for m in (1, 2):
            numa = 'numa%d_%d' % (n, m)
            builder.add(numa, parent='cn%d' % n)
            builder.add('pf%d_%d' % (n, m), parent=numa,
                        inv={'SRIOV_NET_VF': 8})
    return builder.snapshot()


class TestAllocationCandidatesGabbits(testtools.TestCase):
    """allocation-candidates.yaml on SharedStorageFixture."""

    def get(self, pairs, version):
        snap = shared_storage_fixture()
        request = rg.parse_candidate_request(pairs, version)
        return cs.search(snap, request), request, snap

    def counts(self, pairs, version):
        result = self.get(pairs, version)[0]
        return len(result.candidates), len(result.summary_providers)

    def test_no_allocations_yet(self):
        result, request, snap = self.get(
            [('resources', 'VCPU:1,MEMORY_MB:1024,DISK_GB:100')], (1, 10))
        self.assertEqual(3, len(result.candidates))
        body = sent_body(result, request, snap)
        summaries = body['provider_summaries']
        self.assertEqual(3, len(summaries))
        self.assertEqual({'VCPU': {'capacity': 384, 'used': 0},
                          'MEMORY_MB': {'capacity': 196608, 'used': 0},
                          'DISK_GB': {'capacity': 1900, 'used': 0}},
                         summaries[uid('cn2')]['resources'])

    def test_limit(self):
        count, summaries = self.counts(
            [('resources', 'VCPU:1,MEMORY_MB:1024,DISK_GB:100'),
             ('limit', '1')], (1, 16))
        self.assertEqual(1, count)
        self.assertIn(summaries, (1, 2))

    def test_required_and_forbidden_traits(self):
        pairs = [('resources', 'VCPU:1,MEMORY_MB:1024,DISK_GB:100')]
        self.assertEqual((1, 2), self.counts(
            pairs + [('required', 'HW_CPU_X86_SSE')], (1, 17)))
        self.assertEqual((1, 2), self.counts(
            pairs + [('required', 'HW_CPU_X86_SSE,HW_CPU_X86_SSE2')],
            (1, 17)))
        self.assertEqual((0, 0), self.counts(
            pairs + [('required', 'HW_CPU_X86_SSE3')], (1, 17)))
        self.assertEqual(2, self.counts(
            pairs + [('required', '!HW_CPU_X86_SSE')], (1, 22))[0])

    def test_summaries_by_version(self):
        for version, classes in [((1, 26), 1), ((1, 27), 2)]:
            result, request, snap = self.get([('resources', 'VCPU:1')],
                                             version)
            body = sent_body(result, request, snap)
            self.assertEqual(2, len(body['allocation_requests']))
            self.assertEqual(2, len(body['provider_summaries']))
            self.assertEqual(classes, len(
                body['provider_summaries'][uid('cn1')]['resources']))
        self.assertEqual((2, 2), self.counts([('resources', 'VCPU:1')],
                                             (1, 28)))
        self.assertEqual((2, 10), self.counts([('resources', 'VCPU:1')],
                                              (1, 29)))

    def test_nested_by_version(self):
        self.assertEqual((4, 4), self.counts(
            [('resources', 'SRIOV_NET_VF:4')], (1, 28)))
        self.assertEqual((4, 10), self.counts(
            [('resources', 'SRIOV_NET_VF:4')], (1, 29)))
        self.assertEqual((0, 0), self.counts(
            [('resources', 'VCPU:1,SRIOV_NET_VF:4')], (1, 28)))
        self.assertEqual((4, 10), self.counts(
            [('resources', 'VCPU:1,SRIOV_NET_VF:4')], (1, 29)))
        self.assertEqual((4, 5), self.counts(
            [('resources', 'DISK_GB:10,SRIOV_NET_VF:4')], (1, 28)))

    def test_in_tree(self):
        pairs = [('resources', 'VCPU:1,SRIOV_NET_VF:4')]
        for where in ('cn1', 'pf1_2'):
            self.assertEqual((2, 5), self.counts(
                pairs + [('in_tree', uid(where))], (1, 31)))
        disk = [('resources', 'VCPU:1,DISK_GB:10')]
        self.assertEqual(0, self.counts(
            disk + [('in_tree', uid('cn1'))], (1, 31))[0])
        self.assertEqual(1, self.counts(
            disk + [('in_tree', uid('cn2'))], (1, 31))[0])
        self.assertEqual(0, self.counts(
            disk + [('in_tree', uid('ss'))], (1, 31))[0])

    def test_granular_in_tree(self):
        for where in ('cn1', 'pf1_1'):
            self.assertEqual(1, self.counts(
                [('resources1', 'VCPU:1'), ('in_tree1', uid(where))],
                (1, 31))[0])
            self.assertEqual(2, self.counts(
                [('resources1', 'SRIOV_NET_VF:4'), ('in_tree1', uid(where))],
                (1, 31))[0])
        local = [('resources', 'VCPU:1'), ('resources1', 'DISK_GB:10')]
        for where, count in [('cn1', 0), ('cn2', 1), ('ss', 2)]:
            self.assertEqual(count, self.counts(
                local + [('in_tree1', uid(where))], (1, 31))[0], where)
        compute = [('resources', 'VCPU:1'), ('resources1', 'DISK_GB:10')]
        for where, count in [('cn1', 1), ('cn2', 2)]:
            self.assertEqual(count, self.counts(
                compute + [('in_tree', uid(where))], (1, 31))[0], where)
        self.assertEqual(1, self.counts(
            [('resources1', 'VCPU:1'), ('in_tree1', uid('cn1')),
             ('resources2', 'DISK_GB:10'), ('in_tree2', uid('ss')),
             ('group_policy', 'none')], (1, 31))[0])


def query(text):
    """'a=1&b=2' -> [('a', '1'), ('b', '2')] (no escaping needed here)."""
    return [tuple(item.split('=', 1)) for item in text.split('&') if item]


class TestRootRequiredGabbits(testtools.TestCase):
    """allocation-candidates-root-required.yaml on NUMANetworkFixture."""

    CASES = [
        ('resources=VCPU:1&root_required=HW_NUMA_ROOT', 0),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=MISC_SHARES_VIA_AGGREGATE', 0),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=HW_NUMA_ROOT', 0),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=HW_CPU_X86_AVX2', 0),
        ('resources=VCPU:1,MEMORY_MB:1024'
         '&root_required=COMPUTE_VOLUME_MULTI_ATTACH', 4),
        ('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=none'
         '&root_required=COMPUTE_VOLUME_MULTI_ATTACH', 4),
        ('resources1=VCPU:1&resources2=MEMORY_MB:1024&group_policy=isolate'
         '&root_required=COMPUTE_VOLUME_MULTI_ATTACH', 2),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=COMPUTE_VOLUME_MULTI_ATTACH', 4),
        ('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100'
         '&group_policy=none&root_required=COMPUTE_VOLUME_MULTI_ATTACH', 2),
        ('resources=VCPU:1,DISK_GB:100&required=CUSTOM_FOO', 3),
        ('resources=VCPU:1,DISK_GB:100&root_required=CUSTOM_FOO', 2),
        ('resources1=VCPU:1&required1=CUSTOM_FOO&resources2=DISK_GB:100'
         '&group_policy=none', 3),
        ('resources1=VCPU:1&resources2=DISK_GB:100&group_policy=none'
         '&root_required=CUSTOM_FOO', 2),
        ('resources=VCPU:3&root_required=!HW_NUMA_ROOT', 2),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=!MISC_SHARES_VIA_AGGREGATE', 6),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=CUSTOM_FOO,!HW_NUMA_ROOT', 2),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=CUSTOM_FOO,!COMPUTE_VOLUME_MULTI_ATTACH', 2),
        ('resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'
         '&root_required=!CUSTOM_FOO,!COMPUTE_VOLUME_MULTI_ATTACH', 0),
        ('resources1=VCPU:1,MEMORY_MB:1024&resources2=DISK_GB:100'
         '&group_policy=none&root_required=!CUSTOM_FOO', 2),
        ('resources=VCPU:1&required=CUSTOM_FOO&root_required=CUSTOM_FOO', 1),
        ('resources1=VCPU:1&required1=CUSTOM_FOO&root_required=CUSTOM_FOO',
         1),
        ('resources1=VCPU:1&required1=CUSTOM_FOO&root_required=!CUSTOM_FOO',
         1),
        ('resources1=VCPU:1&required1=!CUSTOM_FOO&root_required=CUSTOM_FOO',
         0),
    ]

    def test_counts(self):
        snap = numa_network_fixture()
        for text, count in self.CASES:
            request = rg.parse_candidate_request(query(text), (1, 35))
            self.assertEqual(count, len(cs.search(snap, request).candidates),
                             text)


def numa_aggregate_fixture():
    disk = cns.Inventory(total=2000, reserved=100)
    vcpu = cns.Inventory(total=24, allocation_ratio=16.0)
    return (CloudBuilder()
            .add('cn1', aggs=[AGG_A])
            .add('cn2', aggs=[AGG_A, AGG_B])
            .add('ss1', aggs=[AGG_A], inv={'DISK_GB': disk}, traits=[SHARES])
            .add('ss2', aggs=[AGG_C], inv={'DISK_GB': disk}, traits=[SHARES])
            .add('numa1_1', parent='cn1', aggs=[AGG_C], inv={'VCPU': vcpu})
            .add('numa1_2', parent='cn1', inv={'VCPU': vcpu})
            .add('numa2_1', parent='cn2', inv={'VCPU': vcpu})
            .add('numa2_2', parent='cn2', inv={'VCPU': vcpu})
            .snapshot())


class TestBug1792503Gabbits(testtools.TestCase):
    """allocation-candidates-bug-1792503.yaml on NUMAAggregateFixture:
    member_of matches the provider or its root in the unsuffixed group."""

    CASES = [
        ('resources=VCPU:1', 4),
        ('resources=VCPU:1&member_of={A}', 4),
        ('resources=VCPU:1&member_of={B}', 2),
        ('resources=VCPU:1&member_of={C}', 1),
        ('resources=VCPU:1,DISK_GB:1000', 6),
        ('resources=VCPU:1,DISK_GB:1000&member_of={A}', 4),
        ('resources=VCPU:1,DISK_GB:1000&member_of={B}', 0),
        ('resources=VCPU:1,DISK_GB:1000&member_of={C}', 1),
        ('resources=VCPU:1,DISK_GB:1000&member_of=!{A}', 0),
        ('resources=VCPU:1,DISK_GB:1000&member_of=!{B}', 4),
        ('resources=VCPU:1,DISK_GB:1000&member_of=!{C}', 3),
        ('resources=VCPU:1,DISK_GB:1000&member_of=in:{A},{B}'
         '&member_of=!{C}', 3),
        ('resources=VCPU:1,DISK_GB:1000&member_of={A}'
         '&member_of=!in:{B},{C}', 1),
    ]

    def test_counts(self):
        snap = numa_aggregate_fixture()
        for text, count in self.CASES:
            text = text.format(A=AGG_A, B=AGG_B, C=AGG_C)
            request = rg.parse_candidate_request(query(text), (1, 32))
            self.assertEqual(count, len(cs.search(snap, request).candidates),
                             text)


class TestMappingsNumaGabbits(testtools.TestCase):
    """allocation-candidates-mappings-numa.yaml on NUMANetworkFixture."""

    def get(self, pairs, version=(1, 34)):
        snap = numa_network_fixture()
        request = rg.parse_candidate_request(pairs, version)
        result = cs.search(snap, request)
        return result, sent_body(result, request, snap)

    def test_simple_mapping_non_granular(self):
        _, body = self.get([('resources', 'VCPU:1')])
        self.assertEqual(3, len(body['allocation_requests']))
        self.assertEqual(23, len(body['provider_summaries']))
        first = body['allocation_requests'][0]
        self.assertEqual(2, len(first))
        self.assertIn(first['mappings'][''][0],
                      {uid('cn2'), uid('numa0'), uid('numa1')})
        _, body = self.get([('resources', 'VCPU:1')], (1, 33))
        self.assertEqual(1, len(body['allocation_requests'][0]))

    def test_simple_isolated_mapping(self):
        result, body = self.get([('resources_LEFT', 'VCPU:1'),
                                 ('resources_RIGHT', 'VCPU:1'),
                                 ('group_policy', 'isolate')])
        self.assertEqual(2, len(result.candidates))
        self.assertEqual(12, len(result.summary_providers))

    def test_granular_plus_not_granular(self):
        result, body = self.get([
            ('required_NET1', 'CUSTOM_PHYSNET1'),
            ('resources_NET1', 'NET_BW_EGR_KILOBIT_PER_SEC:10'),
            ('required_NET2', 'CUSTOM_PHYSNET2'),
            ('resources_NET2', 'NET_BW_EGR_KILOBIT_PER_SEC:20'),
            ('resources', 'VCPU:1'), ('group_policy', 'isolate')])
        self.assertEqual(2, len(result.candidates))
        self.assertEqual(12, len(result.summary_providers))
        for cand in result.candidates:
            mapping = cand.mapping_dict()
            self.assertEqual([uid('esn1')], mapping['_NET1'])
            self.assertEqual([uid('esn2')], mapping['_NET2'])
            self.assertEqual(1, len(mapping['']))

    def test_non_isolated_consolidated_mapping(self):
        result, _ = self.get([
            ('resources_BWA', 'NET_BW_EGR_KILOBIT_PER_SEC:10'),
            ('required_BWA', 'CUSTOM_PHYSNET1'),
            ('resources_BWB', 'NET_BW_EGR_KILOBIT_PER_SEC:20'),
            ('required_BWB', 'CUSTOM_PHYSNET1'), ('group_policy', 'none')])
        self.assertEqual(1, len(result.candidates))
        self.assertEqual(12, len(result.summary_providers))
        self.assertEqual({'_BWA': [uid('esn1')], '_BWB': [uid('esn1')]},
                         result.candidates[0].mapping_dict())
        self.assertEqual({uid('esn1'): {'NET_BW_EGR_KILOBIT_PER_SEC': 30}},
                         result.candidates[0].allocation_dict())

    def test_two_resources_on_one_suffix(self):
        result, _ = self.get([
            ('required_NET1', 'CUSTOM_PHYSNET1'),
            ('resources_NET1', 'NET_BW_EGR_KILOBIT_PER_SEC:10'),
            ('required_NET2', 'CUSTOM_PHYSNET2'),
            ('resources_NET2', 'NET_BW_EGR_KILOBIT_PER_SEC:20'),
            ('resources_COMPUTE', 'VCPU:1,MEMORY_MB:1024'),
            ('group_policy', 'isolate')])
        self.assertEqual(2, len(result.candidates))
        for cand in result.candidates:
            self.assertEqual(1, len(cand.mapping_dict()['_COMPUTE']))
