"""Upstream's granular gabbits (GranularFixture), replayed on the search.

Expected counts and amounts are those of upstream's functional tests
(placement/tests/functional/gabbits/granular.yaml and
allocation-candidates-mappings-sharing.yaml); the layout is the fixture's.
"""

import testtools

from osc_placement.server.objects import candidate_search as cs
from osc_placement.server.objects import request_groups as rg
from tests.unit.server.test_candidate_examples import CloudBuilder
from tests.unit.server.test_candidate_examples import uid

AGG_A = 'aaaaaaaa-0000-4000-8000-0000000000a1'
AGG_B = 'aaaaaaaa-0000-4000-8000-0000000000b1'
AGG_C = 'aaaaaaaa-0000-4000-8000-0000000000c1'
SHARES = cs.SHARING_TRAIT
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
                      'VGPU': cs.Inventory(total=8, max_unit=2)},
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
