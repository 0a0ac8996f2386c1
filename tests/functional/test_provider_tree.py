# SPDX-License-Identifier: Apache-2.0
"""``openstack resource provider tree show`` through the real shell."""

import uuid

import yaml

from tests.functional import base
from tests.functional import tree_helpers


class TestTreeShow(tree_helpers.NumaGpuHost, base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.rps = self.build_numa_gpu_host()
        rp = {name: provider['uuid'] for name, provider in self.rps.items()}
        # One consumer on the host and numa0, one on numa1 and the GPU,
        # one more on numa0.
        self.allocate(str(uuid.uuid4()), {
            rp['host']: {'DISK_GB': 20},
            rp['numa0']: {'VCPU': 2, 'MEMORY_MB': 512}},
            consumer_type='INSTANCE')
        self.allocate(str(uuid.uuid4()), {
            rp['numa1']: {'VCPU': 4, 'MEMORY_MB': 1024},
            rp['gpu']: {'VGPU': 1}}, consumer_type='MIGRATION')
        self.allocate(str(uuid.uuid4()), {rp['numa0']: {'VCPU': 1}},
                      consumer_type='INSTANCE')

    def name(self, key):
        return self.rps[key]['name']

    def test_rows_depth_first_children_by_name(self):
        # Asked about the GPU, a leaf: the whole tree from its root.
        rows = self.openstack(['resource', 'provider', 'tree', 'show',
                               self.name('gpu'), '-f', 'value',
                               '-c', 'name', '-c', 'resources',
                               '-c', 'traits', '-c', 'aggregates'])
        self.assertEqual([
            '%s DISK_GB=20/135 2 1' % self.name('host'),
            '  %s MEMORY_MB=512/3584,VCPU=3/32 0 0' % self.name('numa0'),
            '  %s MEMORY_MB=1024/3584,VCPU=4/32 0 0' % self.name('numa1'),
            '    %s VGPU=1/4 1 0' % self.name('gpu'),
        ], rows.splitlines())

    def test_table_keeps_the_indentation(self):
        table = self.openstack('resource provider tree show '
                               + self.rps['numa1']['uuid'])
        self.assertIn('|     %s ' % self.name('gpu'), table)
        self.assertIn('| %s ' % self.rps['gpu']['uuid'], table)
        for column in ('name', 'uuid', 'generation', 'resources', 'traits',
                       'aggregates'):
            self.assertIn(' %s ' % column, table.splitlines()[1])

    def expected_node(self, key, resources, traits=(), aggregates=(),
                      children=()):
        provider = self.rps[key]
        return {'uuid': provider['uuid'], 'name': provider['name'],
                'generation': self.provider_generation(provider['uuid']),
                'parent_provider_uuid': provider['parent_provider_uuid'],
                'resources': resources, 'traits': sorted(traits),
                'aggregates': list(aggregates), 'children': list(children)}

    @staticmethod
    def amounts(used, capacity, inventory):
        return dict(inventory, used=used, capacity=capacity)

    def expected_tree(self):
        numa = self.NUMA
        gpu = self.expected_node(
            'gpu', {'VGPU': self.amounts(1, 4, self.GPU)},
            traits=['CUSTOM_GPU_NVIDIA_A100'])
        numa0 = self.expected_node('numa0', {
            'MEMORY_MB': self.amounts(512, 3584, numa['MEMORY_MB']),
            'VCPU': self.amounts(3, 32, numa['VCPU'])})
        numa1 = self.expected_node('numa1', {
            'MEMORY_MB': self.amounts(1024, 3584, numa['MEMORY_MB']),
            'VCPU': self.amounts(4, 32, numa['VCPU'])}, children=[gpu])
        return self.expected_node(
            'host', {'DISK_GB': self.amounts(20, 135, self.HOST_DISK)},
            traits=['COMPUTE_VOLUME_EXTEND', 'HW_CPU_X86_AVX2'],
            aggregates=[self.aggregate], children=[numa0, numa1])

    def test_json_is_the_nested_tree(self):
        tree = self.openstack('resource provider tree show '
                              + self.name('numa0'), use_json=True)
        self.assertEqual(self.expected_tree(), tree)
        self.assertEqual(
            ['uuid', 'name', 'generation', 'parent_provider_uuid',
             'resources', 'traits', 'aggregates', 'children'], list(tree))

    def test_yaml_is_the_same_tree(self):
        text = self.openstack('resource provider tree show -f yaml '
                              + self.name('host'))
        self.assertEqual(self.expected_tree(), yaml.safe_load(text))

    def test_json_noindent(self):
        text = self.openstack('resource provider tree show -f json '
                              '--noindent ' + self.name('host'))
        self.assertEqual(1, len(text.strip().splitlines()))

    def test_nothing_on_stderr(self):
        # 16 concurrent reads here: more threads than pooled connections
        # would make urllib3 warn "Connection pool is full" on stderr.
        result = self.run_openstack(['resource', 'provider', 'tree', 'show',
                                     self.name('host')])
        self.assertEqual((0, ''), (result.code, result.stderr))

    def test_requests_are_one_per_provider_part(self):
        calls = self.record_requests()
        self.openstack('resource provider tree show ' + self.name('host'))
        paths = sorted(url.split(self.placement.endpoint, 1)[-1]
                       for _method, url, _version in calls)
        rps = [provider['uuid'] for provider in self.rps.values()]
        expected = (['/resource_providers?name=' + self.name('host'),
                     '/resource_providers?in_tree='
                     + self.rps['host']['uuid']]
                    + ['/resource_providers/%s/%s' % (rp, part)
                       for rp in rps for part in ('inventories', 'usages',
                                                  'traits', 'aggregates')])
        self.assertEqual(sorted(expected),
                         [path for path in paths if path != '/'])


class TestTreeShowErrors(base.FunctionalTestCase):

    def test_unknown_name(self):
        name = self.unique('no-such-host')
        self.assertCommandFails(
            'resource provider tree show ' + name,
            "No resource provider with a name or UUID of '%s' exists."
            % name)

    def test_unknown_uuid(self):
        missing = str(uuid.uuid4())
        self.assertCommandFails(
            'resource provider tree show ' + missing,
            "No resource provider with a name or UUID of '%s' exists."
            % missing)

    def test_needs_1_14(self):
        rp = self.create_provider()
        self.assertCommandFails(
            'resource provider tree show ' + rp['uuid'],
            base.GATE % ('1.13', '1.14'), version='1.13')

    def test_negotiated_with_an_old_server(self):
        rp = self.create_provider()
        self.pretend_server_max('1.13')
        calls = self.record_requests()
        self.assertCommandFails('resource provider tree show ' + rp['uuid'],
                                base.GATE % ('1.13', '1.14'))
        # Only the negotiation was sent.
        self.assertEqual(['/'], [url.split(self.placement.endpoint, 1)[-1]
                                 for _method, url, _version in calls])
