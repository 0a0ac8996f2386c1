"""``openstack resource provider consumer list`` through the real shell."""

import uuid

from tests.functional import base
from tests.functional import tree_helpers

ALL_COLUMNS = ['consumer_uuid', 'resources', 'project_id', 'user_id',
               'consumer_generation', 'consumer_type']


class HeldNumaHost(tree_helpers.NumaGpuHost):
    """The NUMA/GPU host with three consumers on it.

    ``spanning`` holds the host and both NUMA nodes, ``migration`` numa1
    and the GPU (consumer type MIGRATION), ``small`` numa0 only and has no
    type.
    """

    def setUp(self):
        super().setUp()
        self.rps = self.build_numa_gpu_host()
        self.rp = {name: provider['uuid']
                   for name, provider in self.rps.items()}
        self.spanning, self.migration, self.small = sorted(
            str(uuid.uuid4()) for _ in range(3))
        self.allocate(self.spanning, {
            self.rp['host']: {'DISK_GB': 20},
            self.rp['numa0']: {'VCPU': 2, 'MEMORY_MB': 512},
            self.rp['numa1']: {'VCPU': 2, 'MEMORY_MB': 256}},
            self.project, self.user, consumer_type='INSTANCE')
        self.allocate(self.migration, {
            self.rp['numa1']: {'VCPU': 4, 'MEMORY_MB': 1024},
            self.rp['gpu']: {'VGPU': 1}},
            self.project, self.user, consumer_type='MIGRATION')
        self.allocate(self.small, {self.rp['numa0']: {'VCPU': 1}},
                      self.project, self.user)

    def consumers(self, provider, *options, **kwargs):
        return self.openstack(
            ['resource', 'provider', 'consumer', 'list', provider]
            + list(options), use_json=True, **kwargs)

    def held(self, consumer, resources, consumer_type, generation=1):
        return {'consumer_uuid': consumer, 'resources': resources,
                'project_id': self.project, 'user_id': self.user,
                'consumer_generation': generation,
                'consumer_type': consumer_type}


class TestConsumerList(HeldNumaHost, base.FunctionalTestCase):

    def test_one_provider_by_name(self):
        rows = self.consumers(self.rps['numa0']['name'])
        self.assertEqual([
            self.held(self.spanning, 'MEMORY_MB=512,VCPU=2', 'INSTANCE'),
            self.held(self.small, 'VCPU=1', 'unknown'),
        ], sorted(rows, key=lambda row: row['consumer_uuid']))
        self.assertEqual(ALL_COLUMNS, list(rows[0]))

    def test_one_provider_by_uuid_in_value_format(self):
        text = self.openstack(['resource', 'provider', 'consumer', 'list',
                               self.rp['numa0'], '-f', 'value',
                               '-c', 'consumer_uuid', '-c', 'resources'])
        self.assertEqual(['%s MEMORY_MB=512,VCPU=2' % self.spanning,
                          '%s VCPU=1' % self.small], text.splitlines())

    def test_tree_sums_over_the_providers(self):
        rows = self.consumers(self.rps['gpu']['name'], '--tree')
        self.assertEqual(ALL_COLUMNS[:2] + ['providers'] + ALL_COLUMNS[2:],
                         list(rows[0]))
        names = {key: provider['name'] for key, provider in self.rps.items()}
        expected = [
            dict(self.held(self.spanning,
                           'DISK_GB=20,MEMORY_MB=768,VCPU=4', 'INSTANCE'),
                 providers=','.join(sorted([names['host'], names['numa0'],
                                            names['numa1']]))),
            dict(self.held(self.migration,
                           'MEMORY_MB=1024,VCPU=4,VGPU=1', 'MIGRATION'),
                 providers=','.join(sorted([names['numa1'],
                                            names['gpu']]))),
            dict(self.held(self.small, 'VCPU=1', 'unknown'),
                 providers=names['numa0']),
        ]
        self.assertEqual(expected, rows)

    def test_tree_table(self):
        table = self.openstack('resource provider consumer list --tree '
                               + self.rp['host'])
        cells = [[cell.strip() for cell in line.split('|')[1:-1]]
                 for line in table.splitlines() if line.startswith('|')]
        self.assertEqual(ALL_COLUMNS[:2] + ['providers'] + ALL_COLUMNS[2:],
                         cells[0])
        self.assertEqual(
            [self.migration, 'MEMORY_MB=1024,VCPU=4,VGPU=1',
             ','.join(sorted([self.rps['numa1']['name'],
                              self.rps['gpu']['name']])),
             self.project, self.user, '1', 'MIGRATION'], cells[2])

    def test_migration_left_behind(self):
        rows = self.consumers(self.rp['host'], '--tree',
                              '--consumer-type', 'MIGRATION')
        self.assertEqual([self.migration],
                         [row['consumer_uuid'] for row in rows])
        self.assertEqual([], self.consumers(self.rp['numa0'],
                                            '--consumer-type', 'MIGRATION'))

    def test_untyped_consumers(self):
        rows = self.consumers(self.rp['host'], '--tree',
                              '--consumer-type', 'unknown')
        self.assertEqual([self.small], [row['consumer_uuid'] for row in rows])

    def test_sorted_by_cliff(self):
        # Sorting is cliff's --sort-column, as for every list command.
        text = self.openstack(['resource', 'provider', 'consumer', 'list',
                               self.rp['host'], '--tree', '--sort-column',
                               'consumer_type', '--sort-descending',
                               '-f', 'value', '-c', 'consumer_type'])
        self.assertEqual(['unknown', 'MIGRATION', 'INSTANCE'],
                         text.splitlines())

    def test_no_consumers(self):
        lonely = self.create_provider()
        self.assertEqual([], self.consumers(lonely['name']))


class TestConsumerListVersions(HeldNumaHost, base.FunctionalTestCase):

    def columns_at(self, ver, *options):
        return list(self.consumers(self.rp['numa0'], *options,
                                   version=ver)[0])

    def test_columns_follow_the_version(self):
        self.assertEqual(ALL_COLUMNS[:2], self.columns_at('1.11'))
        self.assertEqual(ALL_COLUMNS[:4], self.columns_at('1.12'))
        self.assertEqual(ALL_COLUMNS[:5], self.columns_at('1.37'))
        self.assertEqual(ALL_COLUMNS, self.columns_at('1.38'))

    def test_old_version_sends_no_request_per_consumer(self):
        calls = self.record_requests()
        self.consumers(self.rp['numa0'], version='1.11')
        self.assertEqual([], [url for _method, url, _version in calls
                              if '/allocations/' in url])

    def test_consumers_are_read_once_each(self):
        calls = self.record_requests()
        self.consumers(self.rp['host'], '--tree')
        read = sorted(url.rsplit('/', 1)[-1] for _method, url, _version
                      in calls if '/allocations/' in url)
        self.assertEqual(sorted([self.spanning, self.migration, self.small]),
                         read)

    def test_tree_needs_1_14(self):
        self.assertCommandFails(
            'resource provider consumer list --tree ' + self.rp['host'],
            base.GATE % ('1.13', '1.14'), version='1.13')

    def test_consumer_type_needs_1_38(self):
        self.assertCommandFails(
            'resource provider consumer list --consumer-type MIGRATION '
            + self.rp['host'], base.GATE % ('1.37', '1.38'), version='1.37')

    def test_negotiated_with_an_old_server(self):
        self.pretend_server_max('1.13')
        self.assertCommandFails(
            'resource provider consumer list --tree ' + self.rp['host'],
            base.GATE % ('1.13', '1.14'))
        rows = self.consumers(self.rp['numa0'])
        self.assertEqual(ALL_COLUMNS[:4], list(rows[0]))


class TestConsumerListErrors(base.FunctionalTestCase):

    def test_unknown_provider(self):
        for missing in (self.unique('no-such-host'), str(uuid.uuid4())):
            self.assertCommandFails(
                'resource provider consumer list --tree ' + missing,
                "No resource provider with a name or UUID of '%s' exists."
                % missing)


class TestDeletingAHeldHost(base.FunctionalTestCase):
    """The operator's flow: delete refused, who holds it, free, delete."""

    def test_delete_after_removing_the_holders(self):
        host = self.create_provider(self.unique('host'))
        self.openstack(['resource', 'provider', 'inventory', 'set',
                        host['uuid'], '--resource', 'VCPU=8'])
        instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
        self.allocate(instance, {host['uuid']: {'VCPU': 2}},
                      consumer_type='INSTANCE')
        self.allocate(migration, {host['uuid']: {'VCPU': 1}},
                      consumer_type='MIGRATION')

        self.assertCommandFails(
            'resource provider delete ' + host['uuid'],
            'Unable to delete resource provider %s: Resource provider has '
            'allocations. (HTTP 409)' % host['uuid'])

        rows = self.openstack('resource provider consumer list '
                              + host['name'], use_json=True)
        self.assertEqual({instance: 'INSTANCE', migration: 'MIGRATION'},
                         {row['consumer_uuid']: row['consumer_type']
                          for row in rows})
        for row in rows:
            self.openstack('resource provider allocation delete '
                           + row['consumer_uuid'])
        self.assertEqual([], self.openstack(
            'resource provider consumer list ' + host['name'],
            use_json=True))

        self.openstack('resource provider delete ' + host['uuid'])
        self.assertCommandFails(
            'resource provider consumer list ' + host['uuid'],
            "No resource provider with a name or UUID of '%s' exists."
            % host['uuid'])
