# SPDX-License-Identifier: Apache-2.0
"""``resource provider capacity list`` through the real shell.

Every test puts its providers in an aggregate of its own and lists with
``--aggregate``, so that providers of other tests (which share the
database outside the in-process mode) never show up.

The ``--fit`` tests check the count against the server itself: after
``--fit`` says N for a tree, N requests of that shape are claimed on the
tree with ``PUT /allocations/{new consumer}``, each on an allocation
candidate the server offers for the request within that tree and its
sharing providers; every claim must succeed, then the server must offer
no candidate on that tree any more and a claim shaped like the last one
must be refused with 409.
"""

import json
import uuid

from tests.functional import base

CLAIM_VERSION = '1.28'
SHARING = 'MISC_SHARES_VIA_AGGREGATE'
TOTAL = '(total)'


class CapacityTestCase(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.aggregate = str(uuid.uuid4())

    # --- set-up over plain HTTP

    def provider(self, name, parent=None, aggregate=True):
        body = {'name': self.unique(name)}
        if parent:
            body['parent_provider_uuid'] = parent
        rp = self.http('POST', '/resource_providers', body,
                       expect=200).json()
        if aggregate:
            self.set_provider_aggregates(rp['uuid'], [self.aggregate])
        return rp['uuid']

    def inventory(self, rp, **inventories):
        """``VCPU=dict(total=8, max_unit=4)`` or ``VCPU=8``."""
        body = {rc: fields if isinstance(fields, dict) else {'total': fields}
                for rc, fields in inventories.items()}
        self.http('PUT', '/resource_providers/%s/inventories' % rp,
                  {'inventories': body,
                   'resource_provider_generation':
                       self.provider_generation(rp)}, expect=200)

    def capacity(self, *options, **kwargs):
        return self.openstack(['resource', 'provider', 'capacity', 'list']
                              + list(options), use_json=True, **kwargs)

    def in_aggregate(self, *options):
        return self.capacity('--aggregate', self.aggregate, *options)

    def fit(self, request, *options):
        """{root uuid: fit}, and the total."""
        rows = self.in_aggregate('--fit', request, *options)
        for row in rows:
            self.assertEqual(['uuid', 'name', 'fit'], list(row))
            self.assertIsInstance(row['fit'], int)
        self.assertEqual(TOTAL, rows[-1]['uuid'])
        return ({row['uuid']: row['fit'] for row in rows[:-1]},
                rows[-1]['fit'])

    # --- claiming through the API

    def candidates(self, request, providers):
        """The server's allocation requests that use only ``providers``."""
        resources = request.replace('=', ':')
        answer = self.http('GET', '/allocation_candidates?resources='
                           + resources, expect=200).json()
        return [candidate['allocations']
                for candidate in answer['allocation_requests']
                if set(candidate['allocations']) <= set(providers)]

    def claim(self, allocations, expect=204):
        body = {'allocations': allocations, 'project_id': str(uuid.uuid4()),
                'user_id': str(uuid.uuid4()), 'consumer_generation': None}
        return self.http('PUT', '/allocations/%s' % uuid.uuid4(), body,
                         version=CLAIM_VERSION, expect=expect)

    def assertClaimsFit(self, request, providers, count, refused=None):
        """``count`` claims succeed on ``providers``, the next does not.

        When no claim fits, ``refused`` (allocations shaped like the
        request) must be refused by the server: 409 for capacity, 400 for
        unit limits.
        """
        last = refused
        for _ in range(count):
            offered = self.candidates(request, providers)
            self.assertNotEqual([], offered, 'no candidate for a claim '
                                'that --fit counted')
            last = offered[0]
            self.claim(last)
        self.assertEqual([], self.candidates(request, providers))
        if last is not None:
            status = self.claim(last, expect=None).status_code
            self.assertIn(status, (400, 409) if count == 0 else (409,))


class CapacityListTests(CapacityTestCase):

    def world(self):
        """Two hosts; host a over-committed VCPU with a reservation and 3
        VCPU, 1024 MB used."""
        self.a = self.provider('host-a')
        self.inventory(self.a,
                       VCPU={'total': 8, 'reserved': 1,
                             'allocation_ratio': 4.0},
                       MEMORY_MB={'total': 4096, 'reserved': 512})
        self.b = self.provider('host-b')
        self.inventory(self.b, VCPU=4, DISK_GB=100)
        self.allocate(str(uuid.uuid4()),
                      {self.a: {'VCPU': 3, 'MEMORY_MB': 1024}})

    def test_rows_and_totals(self):
        self.world()
        rows = self.in_aggregate()
        expected = sorted([
            [self.a, 'VCPU', 8, 1, 4.0, 28, 3, 25, 10.7],
            [self.a, 'MEMORY_MB', 4096, 512, 1.0, 3584, 1024, 2560, 28.6],
            [self.b, 'VCPU', 4, 0, 1.0, 4, 0, 4, 0.0],
            [self.b, 'DISK_GB', 100, 0, 1.0, 100, 0, 100, 0.0],
        ])
        totals = [
            ['(total)', 'DISK_GB', 100, 0, '', 100, 0, 100, 0.0],
            ['(total)', 'MEMORY_MB', 4096, 512, '', 3584, 1024, 2560,
             28.6],
            ['(total)', 'VCPU', 12, 1, '', 32, 3, 29, 9.4],
        ]
        columns = ['uuid', 'resource_class', 'total', 'reserved',
                   'allocation_ratio', 'capacity', 'used', 'free',
                   'used_percent']
        got = [[row[c] for c in columns] for row in rows]
        self.assertEqual(expected, sorted(got[:4]))
        self.assertEqual(totals, got[4:])
        self.assertEqual({'uuid', 'name'} | set(columns), set(rows[0]))

    def test_resource_class_and_sort_by_free(self):
        self.world()
        rows = self.in_aggregate('--resource-class', 'VCPU',
                                 '--sort-by-free')
        self.assertEqual([(self.b, 4), (self.a, 25), ('(total)', 29)],
                         [(row['uuid'], row['free']) for row in rows])

    def test_required_trait(self):
        self.world()
        self.set_provider_traits(self.b, ['HW_CPU_X86_AVX2'])
        rows = self.in_aggregate('--required', 'HW_CPU_X86_AVX2')
        self.assertEqual({self.b, '(total)'}, {row['uuid'] for row in rows})

    def test_in_tree(self):
        self.world()
        child = self.provider('numa', parent=self.a, aggregate=False)
        self.inventory(child, VCPU=2)
        rows = self.capacity('--in-tree', child, '--resource-class', 'VCPU')
        self.assertEqual([(self.a, 28), (child, 2), ('(total)', 30)],
                         [(row['uuid'], row['capacity']) for row in rows])

    def test_oldest_version(self):
        # No filter below 1.3; other tests' providers may show up outside
        # the in-process mode.
        self.world()
        rows = self.capacity('--resource-class', 'VCPU', version='1.0')
        mine = {row['uuid']: row['free'] for row in rows
                if row['uuid'] in (self.a, self.b)}
        self.assertEqual({self.a: 25, self.b: 4}, mine)
        self.assertEqual('(total)', rows[-1]['uuid'])

    def test_unknown_aggregate_is_empty_and_said_so(self):
        self.world()
        unknown = str(uuid.uuid4())
        for options, rows in ((['--aggregate', unknown], 0),
                              (['--member-of', unknown], 0),
                              (['--member-of', unknown, '--fit', 'VCPU=1'],
                               1)):
            result = self.run_openstack(
                ['resource', 'provider', 'capacity', 'list', '-f', 'json']
                + options)
            self.assertEqual(0, result.code, result.stderr)
            self.assertEqual(rows, len(json.loads(result.stdout)))
            self.assertIn('Note: no resource provider matches the filters '
                          '(%s).' % options[0], result.stderr)

    def test_providers_without_inventory_are_said_so(self):
        self.provider('host-empty')
        self.inventory(self.provider('host-disk'), DISK_GB=10)
        result = self.run_openstack(
            ['resource', 'provider', 'capacity', 'list', '-f', 'json',
             '--aggregate', self.aggregate, '--resource-class', 'VCPU'])
        self.assertEqual(0, result.code, result.stderr)
        self.assertEqual([], json.loads(result.stdout))
        self.assertIn('Note: 2 resource provider(s) match, with no '
                      'inventory of VCPU.', result.stderr)

    def test_unknown_resource_class(self):
        self.world()
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--aggregate',
             self.aggregate, '--resource-class', 'VCPU',
             '--resource-class', 'CUSTOM_NOPE'],
            'No such resource class: CUSTOM_NOPE.')
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--fit',
             'VCPU=1,CUSTOM_NOPE=2'], 'No such resource class: CUSTOM_NOPE.')

    def test_unknown_in_tree_provider(self):
        unknown = str(uuid.uuid4())
        for fit in ([], ['--fit', 'VCPU=1']):
            result = self.assertCommandFails(
                ['resource', 'provider', 'capacity', 'list', '--in-tree',
                 unknown] + fit,
                'No resource provider with uuid %s found (HTTP 404)'
                % unknown)
            self.assertEqual('', result.stdout)

    def test_bad_fit(self):
        for text in ('VCPU', 'VCPU=0', 'VCPU=-1', 'VCPU=x', 'VCPU=1,',
                     '=4', ''):
            result = self.assertCommandFails(
                ['resource', 'provider', 'capacity', 'list', '--fit', text],
                '--fit must be RESOURCE_CLASS=AMOUNT')
            self.assertEqual('', result.stdout)
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--fit',
             'VCPU=1,VCPU=2'], '--fit names VCPU twice')

    def test_fit_and_resource_class_exclude_each_other(self):
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--fit', 'VCPU=1',
             '--resource-class', 'VCPU'], 'not allowed with argument',
            code=2)

    def test_options_above_the_server_version(self):
        self.pretend_server_max('1.13')
        for option, first in ((['--in-tree', str(uuid.uuid4())], '1.14'),
                              (['--required', 'HW_CPU_X86_AVX2'], '1.18'),
                              (['--fit', 'VCPU=1'], '1.18')):
            self.assertCommandFails(
                ['resource', 'provider', 'capacity', 'list'] + option,
                base.GATE % ('1.13', first))

    def test_any_of_traits_needs_139(self):
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--required',
             'HW_CPU_X86_AVX2,HW_CPU_X86_SSE'], base.GATE % ('1.38', '1.39'),
            version='1.38')

    def test_aggregate_needs_13(self):
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--aggregate',
             self.aggregate], base.GATE % ('1.2', '1.3'), version='1.2')

    def test_reads_are_one_list_and_two_per_provider(self):
        self.world()
        calls = self.record_requests()
        self.in_aggregate()
        paths = [path.split('?')[0] for _, path, _ in calls if path != '/']
        self.assertEqual(1, paths.count('/resource_providers'))
        for rp in (self.a, self.b):
            self.assertEqual(1, paths.count(
                '/resource_providers/%s/inventories' % rp))
            self.assertEqual(1, paths.count(
                '/resource_providers/%s/usages' % rp))
        self.assertEqual(5, len(paths))


class FitTests(CapacityTestCase):
    """The classic layouts: the count agrees with what the server lets
    be claimed."""

    def test_flat_host_with_limits_and_usage(self):
        host = self.provider('flat')
        # VCPU: (16 - 2) * 1.5 = 21, 5 used -> 16 free -> 8 claims of 2.
        # MEMORY_MB: (8192 - 1024) = 7168, 1024 used, step 512: 6144 free
        #   -> 6 claims of 1024.
        # DISK_GB: 100 * 1.0, max_unit 50: 10 claims of 10.
        self.inventory(host,
                       VCPU={'total': 16, 'reserved': 2,
                             'allocation_ratio': 1.5, 'max_unit': 4},
                       MEMORY_MB={'total': 8192, 'reserved': 1024,
                                  'step_size': 512},
                       DISK_GB={'total': 100, 'max_unit': 50})
        self.allocate(str(uuid.uuid4()),
                      {host: {'VCPU': 4, 'MEMORY_MB': 1024}})
        self.allocate(str(uuid.uuid4()), {host: {'VCPU': 1}})
        request = 'VCPU=2,MEMORY_MB=1024,DISK_GB=10'
        per_tree, total = self.fit(request)
        self.assertEqual({host: 6}, per_tree)
        self.assertEqual(6, total)
        self.assertClaimsFit(request, [host], 6)
        self.assertEqual(({host: 0}, 0), self.fit(request))

    def test_unit_limits_make_room_useless(self):
        host = self.provider('limits')
        self.inventory(host,
                       VCPU={'total': 64, 'max_unit': 4},
                       MEMORY_MB={'total': 65536, 'step_size': 1024,
                                  'min_unit': 2048})
        # Above max_unit, below min_unit, not a multiple of step_size.
        for request in ('VCPU=5,MEMORY_MB=2048', 'VCPU=1,MEMORY_MB=1024',
                        'VCPU=1,MEMORY_MB=3000'):
            self.assertEqual(({host: 0}, 0), self.fit(request))
            self.assertClaimsFit(request, [host], 0,
                                 refused={host: {'resources': shape(request)}})
        self.assertEqual(({host: 16}, 16), self.fit('VCPU=4,MEMORY_MB=2048'))

    def test_numa_children(self):
        host = self.provider('numa-host')
        numa0 = self.provider('numa0', parent=host, aggregate=False)
        numa1 = self.provider('numa1', parent=host, aggregate=False)
        self.inventory(host, DISK_GB=200)
        self.inventory(numa0, VCPU=4, MEMORY_MB=4096)
        self.inventory(numa1, VCPU={'total': 4, 'allocation_ratio': 2.0},
                       MEMORY_MB=4096)
        self.allocate(str(uuid.uuid4()), {numa0: {'VCPU': 1},
                                          numa1: {'MEMORY_MB': 1024}})
        # VCPU slots of 2: numa0 3//2 = 1, numa1 8//2 = 4 -> 5;
        # MEMORY_MB of 1024: 4 + 3 = 7; DISK_GB of 20: 10.
        request = 'VCPU=2,MEMORY_MB=1024,DISK_GB=20'
        self.assertEqual(({host: 5}, 5), self.fit(request))
        # A child listed alone still stands for its whole tree.
        rows = self.capacity('--in-tree', numa1, '--fit', request)
        self.assertEqual([(host, 5), ('(total)', 5)],
                         [(row['uuid'], row['fit']) for row in rows])
        self.assertClaimsFit(request, [host, numa0, numa1], 5)

    def test_sharing_disk(self):
        host = self.provider('compute')
        pool = self.provider('disk-pool')
        self.inventory(host, VCPU=8, MEMORY_MB=16384)
        self.inventory(pool, DISK_GB={'total': 1000, 'reserved': 100,
                                      'step_size': 10})
        self.set_provider_traits(pool, [SHARING])
        self.allocate(str(uuid.uuid4()), {pool: {'DISK_GB': 420}})
        # DISK_GB: 900 - 420 = 480 -> 4 claims of 100 (VCPU: 8 of 1).
        request = 'VCPU=1,MEMORY_MB=1024,DISK_GB=100'
        per_tree, total = self.fit(request)
        self.assertEqual({host: 4, pool: 0}, per_tree)
        self.assertEqual(4, total)
        self.assertClaimsFit(request, [host, pool], 4)

    def test_sharing_room_is_counted_once_in_the_total(self):
        hosts = [self.provider('cn%d' % n) for n in range(2)]
        for host in hosts:
            self.inventory(host, VCPU=4, MEMORY_MB=4096)
        pool = self.provider('pool')
        self.inventory(pool, DISK_GB=50)
        self.set_provider_traits(pool, [SHARING])
        request = 'VCPU=1,DISK_GB=10'
        # Each host alone could take 4 (VCPU) with the 5 disk slots; the
        # two together only 5, the pool's slots.
        per_tree, total = self.fit(request)
        self.assertEqual({hosts[0]: 4, hosts[1]: 4, pool: 0}, per_tree)
        self.assertEqual(5, total)
        self.assertClaimsFit(request, hosts + [pool], 5)

    def test_total_is_claimed_together_over_two_hosts(self):
        # One disk pool serves two hosts that have no disk of their own.
        # DISK_GB: (110 - 10) = 100, 30 used -> 7 slots of 10. Alone,
        # cn0 takes 4 (VCPU) and cn1 5 (MEMORY_MB); together only the
        # pool's 7, spread over both hosts.
        hosts = [self.provider('cn%d' % n) for n in range(2)]
        self.inventory(hosts[0], VCPU=4, MEMORY_MB=8192)
        self.inventory(hosts[1], VCPU=8, MEMORY_MB=5120)
        pool = self.provider('pool')
        self.inventory(pool, DISK_GB={'total': 110, 'reserved': 10,
                                      'step_size': 10})
        self.set_provider_traits(pool, [SHARING])
        self.allocate(str(uuid.uuid4()), {pool: {'DISK_GB': 30}})
        request = 'VCPU=1,MEMORY_MB=1024,DISK_GB=10'
        per_tree, total = self.fit(request)
        self.assertEqual({hosts[0]: 4, hosts[1]: 5, pool: 0}, per_tree)
        self.assertEqual(7, total)

        # Each host's row is what it takes alone, the pool all its own.
        for host in hosts:
            consumers = self.claim_spread(request, [host], per_tree[host],
                                          pool)
            for consumer in consumers:
                self.http('DELETE', '/allocations/%s' % consumer,
                          expect=204)
        self.assertEqual((per_tree, total), self.fit(request))

        # The total is claimed at once, over both hosts.
        self.claim_spread(request, hosts, total, pool)
        used = self.http('GET', '/resource_providers/%s/usages' % pool,
                         expect=200).json()['usages']
        self.assertEqual(30 + 10 * total, used['DISK_GB'])
        self.assertEqual(({hosts[0]: 0, hosts[1]: 0, pool: 0}, 0),
                         self.fit(request))

    def claim_spread(self, request, hosts, count, pool):
        """``count`` claims, host after host in turn (the next host with a
        candidate when one has none), all accepted; then no host takes
        one more: no candidate, and its last claim again gets 409.
        Returns the consumers."""
        consumers, last = [], {}
        for n in range(count):
            turn = hosts[n % len(hosts):] + hosts[:n % len(hosts)]
            offered = [(host, self.candidates(request, [host, pool]))
                       for host in turn]
            host, candidates = next(
                ((host, found) for host, found in offered if found),
                (None, []))
            self.assertNotEqual([], candidates, 'claim %d of %d counted '
                                'by --fit has no candidate' % (n + 1, count))
            consumer = str(uuid.uuid4())
            self.put_claim(consumer, candidates[0], expect=204)
            consumers.append(consumer)
            last[host] = candidates[0]
        if len(hosts) > 1:
            self.assertEqual(set(hosts), set(last), 'claims not spread')
        for host in hosts:
            self.assertEqual([], self.candidates(request, [host, pool]))
            self.put_claim(str(uuid.uuid4()), last[host], expect=409)
        return consumers

    def put_claim(self, consumer, allocations, expect):
        body = {'allocations': allocations, 'project_id': str(uuid.uuid4()),
                'user_id': str(uuid.uuid4()), 'consumer_generation': None}
        self.http('PUT', '/allocations/%s' % consumer, body,
                  version=CLAIM_VERSION, expect=expect)

    def test_sharing_providers_found_from_the_trees(self):
        # More sharing providers in the cloud than providers in the listed
        # trees: the client starts from the trees' aggregates.
        host = self.provider('host')
        numa = self.provider('numa', parent=host, aggregate=False)
        self.inventory(numa, VCPU=8)
        near = self.provider('near-pool')
        through_child = self.provider('child-pool', aggregate=False)
        elsewhere = [self.provider('far-pool', aggregate=False)
                     for _ in range(3)]
        child_aggregate = str(uuid.uuid4())
        self.set_provider_aggregates(numa, [child_aggregate])
        self.set_provider_aggregates(through_child, [child_aggregate])
        for pool in elsewhere:
            self.set_provider_aggregates(pool, [str(uuid.uuid4())])
        for pool, disk in [(near, 200), (through_child, 300)] + [
                (pool, 1000) for pool in elsewhere]:
            self.inventory(pool, DISK_GB=disk)
            self.set_provider_traits(pool, [SHARING])
        calls = self.record_requests()
        request = 'VCPU=1,DISK_GB=100'
        self.assertEqual(({host: 5, near: 0}, 5), self.fit(request))
        sharing_lists = [path for _, path, _ in calls
                         if 'required=' + SHARING in path]
        self.assertEqual(2, len(sharing_lists), calls)
        self.assertClaimsFit(request, [host, numa, near, through_child], 5)

    def test_class_the_tree_lacks(self):
        host = self.provider('no-disk')
        self.inventory(host, VCPU=8, MEMORY_MB=4096)
        self.assertEqual(({host: 0}, 0), self.fit('VCPU=1,DISK_GB=1'))
        self.assertClaimsFit('VCPU=1,DISK_GB=1', [host], 0)

    def test_after_the_claims_fit_says_zero(self):
        host = self.provider('refit')
        self.inventory(host, VCPU=3, MEMORY_MB=4096)
        self.assertEqual(({host: 3}, 3), self.fit('VCPU=1,MEMORY_MB=1024'))
        self.assertClaimsFit('VCPU=1,MEMORY_MB=1024', [host], 3)
        self.assertEqual(({host: 0}, 0), self.fit('VCPU=1,MEMORY_MB=1024'))
        self.assertEqual(({host: 1}, 1), self.fit('MEMORY_MB=1024'))


def shape(request):
    return {rc: int(amount) for rc, amount in
            (part.split('=') for part in request.split(','))}


DISABLED = 'COMPUTE_STATUS_DISABLED'


class FitFilterTests(CapacityTestCase):
    """--fit with the request's filters counts what Nova can claim."""

    REQUEST = 'VCPU=2,MEMORY_MB=1024,DISK_GB=10'

    def numa_host(self, name, disabled=False):
        """A host with two NUMA children holding VCPU and memory, its
        disk shared; COMPUTE_STATUS_DISABLED on the root only, as Nova
        sets it."""
        host = self.provider(name)
        for index in range(2):
            numa = self.provider('%s-numa%d' % (name, index), parent=host,
                                 aggregate=False)
            self.inventory(numa, VCPU=4 + index, MEMORY_MB=3072)
        if disabled:
            self.set_provider_traits(host, [DISABLED])
        return host

    def disabled_cloud(self):
        """Two enabled NUMA hosts, two disabled ones and a flat host, all
        served by one shared disk with room for fewer claims than the
        hosts' VCPUs allow."""
        enabled = [self.numa_host('on%d' % i) for i in range(2)]
        disabled = [self.numa_host('off%d' % i, disabled=True)
                    for i in range(2)]
        flat = self.provider('flat')
        self.inventory(flat, VCPU=8, MEMORY_MB=8192)
        off_flat = self.provider('off-flat')
        self.inventory(off_flat, VCPU=8, MEMORY_MB=8192)
        self.set_provider_traits(off_flat, [DISABLED])
        disk = self.provider('disk')
        self.inventory(disk, DISK_GB=300)
        self.set_provider_traits(disk, [SHARING])
        return enabled, disabled + [off_flat], flat, disk

    def nova_claims(self, *filters):
        """Claims as Nova makes them, until none is offered: candidates
        with limit=1 within the aggregate, then PUT of the first
        allocation request for a new consumer. The count and the last
        allocations claimed."""
        query = ('resources=%s&member_of=%s&limit=1%s'
                 % (self.REQUEST.replace('=', ':'), self.aggregate,
                    ''.join('&' + f for f in filters)))
        count, last = 0, None
        while True:
            answer = self.http('GET', '/allocation_candidates?' + query,
                               version='1.39', expect=200).json()
            if not answer['allocation_requests']:
                return count, last
            last = answer['allocation_requests'][0]['allocations']
            self.claim(last)
            count += 1

    def fit_run(self, *options):
        result = self.run_openstack(
            ['resource', 'provider', 'capacity', 'list', '--aggregate',
             self.aggregate, '--fit', self.REQUEST, '-f', 'json']
            + list(options))
        self.assertEqual(0, result.code, result.stderr)
        rows = json.loads(result.stdout)
        return ({row['uuid']: row['fit'] for row in rows[:-1]},
                rows[-1]['fit'], result.stderr)

    def test_forbidden_disabled_is_what_nova_can_claim(self):
        enabled, disabled, flat, disk = self.disabled_cloud()
        per_tree, total, stderr = self.fit_run('--forbidden', DISABLED)
        self.assertNotIn('disabled hosts', stderr)
        # A disabled host whose root supplies is out. The trait is judged
        # on the providers that supply, as Placement judges it: the NUMA
        # children of a disabled root, with the shared disk, still pass.
        self.assertEqual([4, 4, 0], [per_tree[host] for host in disabled])
        # 4 per NUMA host and the flat one; the shared disk (30 claims)
        # is the limit, counted once.
        self.assertEqual(min(4 * 4 + 4, 30), total)
        count, last = self.nova_claims('required=!' + DISABLED)
        self.assertEqual(total, count)
        # One more claim fails: the server refuses the last shape again.
        self.assertEqual(409, self.claim(last, expect=None).status_code)
        self.assertEqual(0, self.fit_run('--forbidden', DISABLED)[1])

    def test_without_forbidden_the_disabled_hosts_are_said_to_count(self):
        enabled, disabled, flat, disk = self.disabled_cloud()
        self.inventory(disk, DISK_GB=1000)
        with_disabled = self.fit_run()
        self.assertIn('counts include disabled hosts: Nova adds '
                      '!COMPUTE_STATUS_DISABLED; pass --forbidden '
                      'COMPUTE_STATUS_DISABLED', with_disabled[2])
        # The flat disabled host: 8 VCPUs, 4 claims of 2, Nova's none.
        self.assertEqual(4, with_disabled[0][disabled[-1]])
        without = self.fit_run('--forbidden', DISABLED)
        self.assertEqual(0, without[0][disabled[-1]])
        self.assertEqual(with_disabled[1] - 4, without[1])
        self.assertEqual(without[1],
                         self.nova_claims('required=!' + DISABLED)[0])

    def test_required_trait_on_the_root_ties_the_classes(self):
        # The trait is on the root, which supplies nothing itself but the
        # disk: claims need the root's disk, so the shared disk is no use.
        host = self.provider('avx')
        numa = self.provider('avx-numa', parent=host, aggregate=False)
        self.inventory(numa, VCPU=16, MEMORY_MB=16384)
        self.inventory(host, DISK_GB=30)
        self.set_provider_traits(host, ['HW_CPU_X86_AVX2'])
        disk = self.provider('disk')
        self.inventory(disk, DISK_GB=1000)
        self.set_provider_traits(disk, [SHARING])
        per_tree, total, _ = self.fit_run('--required', 'HW_CPU_X86_AVX2')
        self.assertEqual(3, per_tree[host])
        self.assertEqual(3, total)
        self.assertEqual(3, self.nova_claims('required=HW_CPU_X86_AVX2')[0])

    def test_member_of_keeps_the_trees_in_the_aggregate(self):
        inside = self.numa_host('inside')
        other = str(uuid.uuid4())
        outside = self.provider('outside', aggregate=False)
        self.set_provider_aggregates(outside, [other])
        self.inventory(outside, VCPU=8, MEMORY_MB=8192, DISK_GB=100)
        disk = self.provider('disk')
        self.inventory(disk, DISK_GB=1000)
        self.set_provider_traits(disk, [SHARING])
        rows = self.capacity('--fit', self.REQUEST, '--member-of',
                             self.aggregate)
        per_tree = {row['uuid']: row['fit'] for row in rows[:-1]}
        self.assertEqual(4, per_tree[inside])
        self.assertNotIn(outside, per_tree)
        # Forbidding the aggregate leaves the inside tree out.
        rows = self.capacity('--aggregate', self.aggregate, '--fit',
                             self.REQUEST, '--member-of', '!' + self.aggregate)
        self.assertEqual([TOTAL], [row['uuid'] for row in rows])

    def test_in_tree_takes_a_name(self):
        host = self.numa_host('named')
        name = self.http('GET', '/resource_providers/' + host,
                         expect=200).json()['name']
        disk = self.provider('disk')
        self.inventory(disk, DISK_GB=1000)
        self.set_provider_traits(disk, [SHARING])
        rows = self.capacity('--in-tree', name, '--fit', self.REQUEST)
        self.assertEqual([(host, 4), (TOTAL, 4)],
                         [(row['uuid'], row['fit']) for row in rows])
        self.assertCommandFails(
            ['resource', 'provider', 'capacity', 'list', '--in-tree',
             'no-such-host', '--fit', self.REQUEST],
            "No resource provider with a name or UUID of 'no-such-host' "
            "exists.")


class RowFilterTests(CapacityTestCase):
    """Without --fit, --forbidden and --member-of filter the providers."""

    def test_forbidden_and_member_of(self):
        plain = self.provider('plain')
        marked = self.provider('marked')
        for rp in (plain, marked):
            self.inventory(rp, VCPU=8)
        self.set_provider_traits(marked, ['CUSTOM_FT_MARK'])
        listed = {row['uuid'] for row in self.capacity(
            '--member-of', self.aggregate)}
        self.assertEqual({plain, marked, TOTAL}, listed)
        listed = {row['uuid'] for row in self.capacity(
            '--member-of', self.aggregate, '--forbidden', 'CUSTOM_FT_MARK')}
        self.assertEqual({plain, TOTAL}, listed)
