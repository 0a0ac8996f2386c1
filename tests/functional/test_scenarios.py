# SPDX-License-Identifier: Apache-2.0
"""The seed scenarios, every step through the ``openstack`` shell.

A host is registered the way an operator (or a script) would: a root
provider with traits and an aggregate, two NUMA children with CPU and
memory, a GPU under NUMA node 0, and a DISK_GB provider shared through the
aggregate (``MISC_SHARES_VIA_AGGREGATE``). Then candidates are listed
(granular groups, isolate, same_subtree), one is claimed, usages are read,
a concurrent writer is caught by the consumer generation, and the host is
taken down, which the server refuses while it has children or allocations.

The tests use the negotiated default version, as a user does; queries are
scoped with ``--root-required`` on a trait made for the test, so other
tests' providers (outside the in-process mode) never show up.
"""

import uuid

from tests.functional import base

AVX2 = 'HW_CPU_X86_AVX2'
SHARES = 'MISC_SHARES_VIA_AGGREGATE'


def alloc(rp, **resources):
    return (rp, frozenset('%s=%s' % item for item in resources.items()))


class Host:
    """Providers of one registered host, by role."""


class ScenarioHelpers:
    """Steps of the scenarios, each through the client."""

    def cli(self, *argv):
        return self.openstack(list(argv), use_json=True)

    def create(self, name, parent=None):
        argv = ['resource', 'provider', 'create', self.unique(name)]
        if parent:
            argv += ['--parent-provider', parent]
        return self.cli(*argv)['uuid']

    def inventory(self, rp, *resources):
        argv = ['resource', 'provider', 'inventory', 'set', rp]
        for resource in resources:
            argv += ['--resource', resource]
        return self.cli(*argv)

    def traits(self, rp, *traits):
        argv = ['resource', 'provider', 'trait', 'set', rp]
        for trait in traits:
            argv += ['--trait', trait]
        return sorted(row['name'] for row in self.cli(*argv))

    def aggregate(self, rp, agg):
        generation = self.cli('resource', 'provider', 'show', rp)[
            'generation']
        return self.cli('resource', 'provider', 'aggregate', 'set', rp,
                        '--aggregate', agg, '--generation', str(generation))

    def register_host(self):
        """The seed host, built through the client only."""
        h = Host()
        h.tag = self.unique_custom('CUSTOM_HOST')
        self.assertEqual('', self.openstack(['trait', 'create', h.tag]))
        h.agg = str(uuid.uuid4())
        h.cn = self.create('cn')
        self.assertEqual(sorted([AVX2, h.tag]),
                         self.traits(h.cn, AVX2, h.tag))
        self.assertEqual([{'uuid': h.agg}], self.aggregate(h.cn, h.agg))
        h.numa0 = self.create('numa0', parent=h.cn)
        h.numa1 = self.create('numa1', parent=h.cn)
        for numa in (h.numa0, h.numa1):
            rows = self.inventory(numa, 'VCPU=4', 'MEMORY_MB=2048')
            self.assertEqual({'VCPU': 4, 'MEMORY_MB': 2048},
                             {r['resource_class']: r['total'] for r in rows})
            self.traits(numa, 'HW_NUMA_ROOT')
        h.gpu = self.create('gpu', parent=h.numa0)
        self.inventory(h.gpu, 'VGPU=2')
        h.disk = self.create('disk')
        rows = self.inventory(h.disk, 'DISK_GB=100',
                              'DISK_GB:allocation_ratio=1.5')
        self.assertEqual([('DISK_GB', 100, 1.5)],
                         [(r['resource_class'], r['total'],
                           r['allocation_ratio']) for r in rows])
        self.traits(h.disk, SHARES)
        self.aggregate(h.disk, h.agg)
        tree = self.cli('resource', 'provider', 'list', '--in-tree', h.numa1)
        self.assertEqual({h.cn, h.numa0, h.numa1, h.gpu},
                         {row['uuid'] for row in tree})
        self.assertEqual({h.cn}, {row['root_provider_uuid'] for row in tree})
        self.assertEqual(
            {h.cn: None, h.numa0: h.cn, h.numa1: h.cn, h.gpu: h.numa0},
            {row['uuid']: row['parent_provider_uuid'] for row in tree})
        return h

    def candidates(self, host, *options):
        """{candidate as frozenset of (rp, allocation pieces)}; rows kept."""
        rows = self.cli('allocation', 'candidate', 'list',
                        '--root-required', host.tag, *options)
        found = {}
        for row in rows:
            found.setdefault(row['#'], set()).add(
                (row['resource provider'],
                 frozenset(row['allocation'].split(','))))
        self.rows = rows
        return {frozenset(c) for c in found.values()}

    def claim(self, consumer, *allocations):
        argv = ['resource', 'provider', 'allocation', 'set', consumer,
                '--project-id', self.project, '--user-id', self.user]
        for rp, resources in allocations:
            argv += ['--allocation', 'rp=%s,%s' % (rp, ','.join(resources))]
        return self.cli(*argv)

    def usages(self, rp):
        return {row['resource_class']: row['usage'] for row in
                self.cli('resource', 'provider', 'usage', 'show', rp)}


class TestScenarios(ScenarioHelpers, base.FunctionalTestCase):

    VERSION = None  # negotiate, as a user does

    def test_candidates_for_the_host(self):
        h = self.register_host()
        disk = alloc(h.disk, DISK_GB=10)
        # The unnamed group may spread over the tree and the sharing disk.
        self.assertEqual(
            {frozenset([alloc(h.numa0, VCPU=2, MEMORY_MB=512), disk]),
             frozenset([alloc(h.numa1, VCPU=2, MEMORY_MB=512), disk]),
             frozenset([alloc(h.numa0, VCPU=2), alloc(h.numa1, MEMORY_MB=512),
                        disk]),
             frozenset([alloc(h.numa1, VCPU=2), alloc(h.numa0, MEMORY_MB=512),
                        disk])},
            self.candidates(h, '--resource', 'VCPU=2', '--resource',
                            'MEMORY_MB=512', '--resource', 'DISK_GB=10'))
        summary = {row['resource provider']: row['inventory used/capacity']
                   for row in self.rows}
        self.assertEqual('DISK_GB=0/150', summary[h.disk])
        # Granular groups: each from one provider; isolate: not the same.
        groups = ['--resource', 'DISK_GB=10',
                  '--group', '1', '--resource', 'VCPU=3',
                  '--group', '2', '--resource', 'VCPU=1']
        isolated = {
            frozenset([alloc(h.numa0, VCPU=3), alloc(h.numa1, VCPU=1), disk]),
            frozenset([alloc(h.numa1, VCPU=3), alloc(h.numa0, VCPU=1), disk])}
        self.assertEqual(isolated, self.candidates(
            h, *groups, '--group-policy', 'isolate'))
        self.assertEqual(
            isolated | {frozenset([alloc(h.numa0, VCPU=4), disk]),
                        frozenset([alloc(h.numa1, VCPU=4), disk])},
            self.candidates(h, *groups, '--group-policy', 'none'))
        # The GPU child, with CPUs of its own NUMA node.
        gpu_request = ['--group', 'gpu', '--resource', 'VGPU=1',
                       '--group', 'cpu', '--resource', 'VCPU=1',
                       '--same-subtree', 'gpu,cpu', '--mappings']
        self.assertEqual(
            {frozenset([alloc(h.gpu, VGPU=1), alloc(h.numa0, VCPU=1)])},
            self.candidates(h, *gpu_request))
        self.assertEqual({h.gpu: ['gpu'], h.numa0: ['cpu']},
                         {row['resource provider']: row['mappings']
                          for row in self.rows})
        # Unnamed-group traits count on the providers that supply
        # something: not on the root, but on the sharing disk.
        self.assertEqual(set(), self.candidates(
            h, '--resource', 'VGPU=1', '--required', AVX2))
        self.assertEqual(
            {frozenset([alloc(h.gpu, VGPU=1), alloc(h.disk, DISK_GB=1)])},
            self.candidates(h, '--resource', 'VGPU=1', '--resource',
                            'DISK_GB=1', '--required', AVX2 + ',' + SHARES))
        self.assertEqual(
            {frozenset([alloc(h.gpu, VGPU=1)])},
            self.candidates(h, '--resource', 'VGPU=1', '--forbidden',
                            'HW_NUMA_ROOT'))
        self.assertEqual(
            {frozenset([alloc(h.numa0, VCPU=1)]),
             frozenset([alloc(h.numa1, VCPU=1)])},
            self.candidates(h, '--group', 'a', '--resource', 'VCPU=1',
                            '--required', 'HW_NUMA_ROOT'))
        # No disk is shared without the aggregate: nothing can serve it.
        self.assertEqual(
            [{'uuid': h.agg}],
            self.cli('resource', 'provider', 'aggregate', 'list', h.disk))
        generation = self.cli('resource', 'provider', 'show', h.disk)[
            'generation']
        self.assertEqual([], self.cli(
            'resource', 'provider', 'aggregate', 'set', h.disk,
            '--generation', str(generation)))
        self.assertEqual(set(), self.candidates(
            h, '--resource', 'VCPU=1', '--resource', 'DISK_GB=10'))

    def test_claim_usage_and_release(self):
        h = self.register_host()
        consumer = str(uuid.uuid4())
        picked = [alloc(h.numa0, VCPU=3, MEMORY_MB=512),
                  alloc(h.numa1, VCPU=1, MEMORY_MB=512),
                  alloc(h.disk, DISK_GB=10)]
        rows = self.claim(consumer, *picked)
        expected = {
            h.numa0: {'VCPU': 3, 'MEMORY_MB': 512},
            h.numa1: {'VCPU': 1, 'MEMORY_MB': 512},
            h.disk: {'DISK_GB': 10}}
        self.assertEqual(expected, {r['resource_provider']: r['resources']
                                    for r in rows})
        # Negotiated: allocation output stops at 1.37, no consumer_type.
        self.assertEqual({(self.project, self.user)},
                         {(r['project_id'], r['user_id']) for r in rows})
        self.assertNotIn('consumer_type', rows[0])
        self.assertEqual(rows, self.cli('resource', 'provider', 'allocation',
                                        'show', consumer))
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 512}, self.usages(h.numa0))
        self.assertEqual({'DISK_GB': 10}, self.usages(h.disk))
        totals = {'VCPU': 4, 'MEMORY_MB': 1024, 'DISK_GB': 10}
        for extra in ([], ['--user-id', self.user]):
            usage = self.cli('resource', 'usage', 'show', self.project,
                             *extra)
            self.assertEqual(totals, {r['resource_class']: r['usage']
                                      for r in usage})
        # The candidates now see what is used; numa0 has 1 VCPU left.
        found = self.candidates(h, '--group', '1', '--resource', 'VCPU=2',
                                '--group', '2', '--resource', 'VCPU=2',
                                '--group-policy', 'isolate')
        self.assertEqual(set(), found)
        self.candidates(h, '--resource', 'VCPU=1', '--resource',
                        'MEMORY_MB=1024')
        summary = {row['resource provider']: set(
            row['inventory used/capacity'].split(',')) for row in self.rows}
        self.assertEqual({'VCPU=3/4', 'MEMORY_MB=512/2048'},
                         summary[h.numa0])
        # Move the small share off numa1, then release everything.
        rows = self.cli('resource', 'provider', 'allocation', 'unset',
                        consumer, '--provider', h.numa1)
        self.assertEqual({h.numa0, h.disk},
                         {r['resource_provider'] for r in rows})
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, self.usages(h.numa1))
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'allocation', 'delete', consumer]))
        self.assertEqual([], self.cli('resource', 'provider', 'allocation',
                                      'show', consumer))
        self.assertEqual([], self.cli('resource', 'usage', 'show',
                                      self.project))

    def test_concurrent_claims(self):
        h = self.register_host()
        consumer = str(uuid.uuid4())
        self.claim(consumer, alloc(h.numa0, VCPU=1))
        path = '/allocations/' + consumer

        def scheduler_moves_it(send):
            body = {'allocations': {h.numa1: {'resources': {'VCPU': 2}}},
                    'consumer_generation': 1, 'project_id': self.project,
                    'user_id': self.user}
            send('PUT', path, json=body, version='1.28')

        with self.meanwhile('GET', path, scheduler_moves_it):
            self.assertCommandFails(
                ['resource', 'provider', 'allocation', 'set', consumer,
                 '--allocation', 'rp=%s,VCPU=4' % h.numa0,
                 '--project-id', self.project, '--user-id', self.user],
                'consumer generation conflict - expected 2 but got 1 '
                '(HTTP 409)')
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, self.usages(h.numa0))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 0}, self.usages(h.numa1))
        # Trying again reads the new generation and wins.
        rows = self.claim(consumer, alloc(h.numa0, VCPU=4))
        self.assertEqual([(h.numa0, {'VCPU': 4})],
                         [(r['resource_provider'], r['resources'])
                          for r in rows])
        # A claim beyond capacity is refused and changes nothing.
        other = str(uuid.uuid4())
        self.assertCommandFails(
            ['resource', 'provider', 'allocation', 'set', other,
             '--allocation', 'rp=%s,VCPU=1' % h.numa0,
             '--project-id', self.project, '--user-id', self.user],
            "Unable to allocate inventory: Unable to create allocation for "
            "'VCPU' on resource provider '%s'. The requested amount would "
            "exceed the capacity. (HTTP 409)" % h.numa0)
        self.assertEqual([], self.cli('resource', 'provider', 'allocation',
                                      'show', other))

    def test_take_the_host_down(self):
        h = self.register_host()
        consumer = str(uuid.uuid4())
        self.claim(consumer, alloc(h.gpu, VGPU=1), alloc(h.disk, DISK_GB=5))
        for parent in (h.cn, h.numa0):
            self.assertCommandFails(
                ['resource', 'provider', 'delete', parent],
                'Unable to delete parent resource provider %s: It has child '
                'resource providers. (HTTP 409)' % parent)
        for used in (h.gpu, h.disk):
            self.assertCommandFails(
                ['resource', 'provider', 'delete', used],
                'Unable to delete resource provider %s: Resource provider '
                'has allocations. (HTTP 409)' % used)
        self.assertCommandFails(
            ['trait', 'delete', h.tag],
            'The trait %s is in use by a resource provider. (HTTP 409)'
            % h.tag)
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'allocation', 'delete', consumer]))
        for rp in (h.gpu, h.numa0, h.numa1, h.cn, h.disk):
            self.assertEqual('', self.openstack(
                ['resource', 'provider', 'delete', rp]))
        self.assertCommandFails(
            ['resource', 'provider', 'show', h.cn],
            'No resource provider with uuid %s found (HTTP 404)' % h.cn)
        self.assertEqual('', self.openstack(['trait', 'delete', h.tag]))


class TestMigrationScenario(ScenarioHelpers, base.FunctionalTestCase):
    """A migration with consumer types, the version pinned at 1.39.

    The client has no multi-consumer write, so the move is two
    ``allocation set``: the source share goes to a MIGRATION consumer,
    the instance claims the destination; confirming deletes the
    migration's allocations, reverting moves the instance back.
    """

    VERSION = '1.39'

    def claim_typed(self, consumer, consumer_type, *allocations):
        argv = ['resource', 'provider', 'allocation', 'set', consumer,
                '--project-id', self.project, '--user-id', self.user,
                '--consumer-type', consumer_type]
        for rp, resources in allocations:
            argv += ['--allocation', 'rp=%s,%s' % (rp, ','.join(resources))]
        return self.cli(*argv)

    def project_usage(self):
        return sorted(
            (r['consumer_type'], r['resource_class'], r['usage'],
             r['consumer_count'])
            for r in self.cli('resource', 'usage', 'show', self.project))

    def test_migrate_confirm_and_revert(self):
        source, dest = self.register_host(), self.register_host()
        instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
        share = ['VCPU=2', 'MEMORY_MB=1024']
        rows = self.claim_typed(instance, 'INSTANCE', (source.numa0, share))
        self.assertEqual([('INSTANCE', self.project, self.user)],
                         [(r['consumer_type'], r['project_id'],
                           r['user_id']) for r in rows])
        self.assertEqual([('INSTANCE', 'MEMORY_MB', 1024, 1),
                          ('INSTANCE', 'VCPU', 2, 1)], self.project_usage())
        # Migrate: the source share moves to the migration, the instance
        # claims a destination candidate.
        [candidate] = self.candidates(
            dest, '--group', '1', '--resource', 'VCPU=2', '--resource',
            'MEMORY_MB=1024', '--required', 'HW_NUMA_ROOT', '--limit', '1')
        [(target, _resources)] = candidate
        self.assertIn(target, (dest.numa0, dest.numa1))
        self.claim_typed(migration, 'MIGRATION', (source.numa0, share))
        self.claim_typed(instance, 'INSTANCE', (target, share))
        self.assertEqual([('INSTANCE', 'MEMORY_MB', 1024, 1),
                          ('INSTANCE', 'VCPU', 2, 1),
                          ('MIGRATION', 'MEMORY_MB', 1024, 1),
                          ('MIGRATION', 'VCPU', 2, 1)], self.project_usage())
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024},
                         self.usages(source.numa0))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024}, self.usages(target))
        # Revert: the instance goes back, the migration is dropped.
        self.claim_typed(instance, 'INSTANCE', (source.numa0, share))
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'allocation', 'delete', migration]))
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, self.usages(target))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024},
                         self.usages(source.numa0))
        # Migrate again and confirm: the migration's share is deleted.
        self.claim_typed(migration, 'MIGRATION', (source.numa0, share))
        self.claim_typed(instance, 'INSTANCE', (target, share))
        self.assertEqual('', self.openstack(
            ['resource', 'provider', 'allocation', 'delete', migration]))
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0},
                         self.usages(source.numa0))
        self.assertEqual([('INSTANCE', 'MEMORY_MB', 1024, 1),
                          ('INSTANCE', 'VCPU', 2, 1)], self.project_usage())
        rows = self.cli('resource', 'provider', 'allocation', 'show',
                        instance)
        self.assertEqual([(target, {'VCPU': 2, 'MEMORY_MB': 1024},
                           'INSTANCE')],
                         [(r['resource_provider'], r['resources'],
                           r['consumer_type']) for r in rows])
