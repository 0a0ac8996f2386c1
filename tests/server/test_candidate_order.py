# SPDX-License-Identifier: Apache-2.0
"""The order of classes and groups in GET /allocation_candidates, through
the WSGI app: each provider's resources in the order the query names the
classes, group after group, and the mappings in the order it names the
groups, as upstream answers (tests/compat/test_answer_texts.py compares
the two), but for the unsuffixed group's classes by class id once a
provider has a parent or shares. Queries that differ only in that order
are asked one after the other, so that no answer, candidate or body kept
for one is sent for the other."""

import sqlalchemy as sa

from osc_placement.server.db import tables
from tests.server import candidate_cloud
from tests.server import test_bad_input

ORDERS = ('VCPU:1,MEMORY_MB:64,DISK_GB:10', 'DISK_GB:10,VCPU:1,MEMORY_MB:64',
          'MEMORY_MB:64,DISK_GB:10,VCPU:1')
HOST_ONLY = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 100}}


def names(resources):
    return [name.split(':')[0] for name in resources.split(',')]


class _Candidates(test_bad_input.AppTestCase):

    def candidates(self, query, version='placement 1.39'):
        status, body = self.call('GET', '/allocation_candidates?' + query,
                                 version=version)
        self.assertEqual(200, status, body)
        return body['allocation_requests']


class TestOneHost(_Candidates):

    def setUp(self):
        super().setUp()
        self.host = self.provider(**HOST_ONLY)

    def test_dict_form_keeps_the_query_order(self):
        for _ in range(2):  # the second round is answered from memory
            for resources in ORDERS:
                [request] = self.candidates('resources=' + resources)
                self.assertEqual(
                    names(resources),
                    list(request['allocations'][self.host]['resources']))

    def test_list_form_keeps_the_query_order(self):
        for resources in ORDERS:
            [request] = self.candidates('resources=' + resources,
                                        version='placement 1.10')
            [allocation] = request['allocations']
            self.assertEqual(names(resources),
                             list(allocation['resources']))

    def test_groups_in_the_query_order(self):
        for query, classes, suffixes in (
                ('resources1=MEMORY_MB:64,VCPU:1&resources=DISK_GB:10',
                 ['MEMORY_MB', 'VCPU', 'DISK_GB'], ['1', '']),
                ('resources=DISK_GB:10&resources1=MEMORY_MB:64,VCPU:1',
                 ['DISK_GB', 'MEMORY_MB', 'VCPU'], ['', '1']),
                ('resources2=VCPU:1&resources1=DISK_GB:10,MEMORY_MB:64',
                 ['VCPU', 'DISK_GB', 'MEMORY_MB'], ['2', '1'])):
            [request] = self.candidates(query + '&group_policy=none')
            self.assertEqual(
                classes, list(request['allocations'][self.host]['resources']),
                query)
            self.assertEqual(suffixes, list(request['mappings']), query)


class TestHostAndSharedDisk(_Candidates):
    """A request whose candidates take classes from two providers.

    With a sharing provider in the cloud the unsuffixed group's classes
    come by class id, as upstream's (TestElsewhereNestedOrSharing): the
    orders asked here name VCPU before MEMORY_MB, where both orders agree
    and names' order does not."""

    def setUp(self):
        super().setUp()
        self.host = self.provider(VCPU={'total': 8},
                                  MEMORY_MB={'total': 4096})
        self.disk = self.provider(DISK_GB={'total': 100})
        aggregate = '11111111-2222-3333-4444-555555555555'
        for uuid in (self.host, self.disk):
            status, _ = self.call(
                'PUT', '/resource_providers/%s/aggregates' % uuid,
                {'aggregates': [aggregate],
                 'resource_provider_generation': 1})
            self.assertEqual(200, status)
        status, _ = self.call(
            'PUT', '/resource_providers/%s/traits' % self.disk,
            {'traits': ['MISC_SHARES_VIA_AGGREGATE'],
             'resource_provider_generation': 2})
        self.assertEqual(200, status)

    def test_each_provider_keeps_the_query_order(self):
        for _ in range(2):
            for resources in ORDERS[:2]:
                [request] = self.candidates('resources=' + resources)
                allocations = request['allocations']
                self.assertEqual(
                    [name for name in names(resources) if name != 'DISK_GB'],
                    list(allocations[self.host]['resources']))
                self.assertEqual(['DISK_GB'],
                                 list(allocations[self.disk]['resources']))


class TestElsewhereNestedOrSharing(_Candidates):
    """Once any provider of the database has a parent or the sharing
    trait, upstream lists the unsuffixed group's classes by class id
    (VCPU, MEMORY_MB, DISK_GB), suffixed groups' still in the query's
    order; the providers that decide it here are in no tree of the host,
    and the answers follow them as they come and go, whether the worker
    keeps the structure or reads windows of trees."""

    BY_ID = ['VCPU', 'MEMORY_MB', 'DISK_GB']
    QUERY = 'resources=MEMORY_MB:64,DISK_GB:10,VCPU:1'
    MIXED = ('resources1=DISK_GB:10&resources=MEMORY_MB:64,VCPU:1'
             '&group_policy=none')

    def setUp(self):
        super().setUp()
        self.host = self.provider(**HOST_ONLY)

    def classes(self, query, version='placement 1.39'):
        [request] = self.candidates(query, version=version)
        resources = request['allocations'][self.host]['resources']
        return list(resources)

    def assert_orders(self, by_id):
        expected = self.BY_ID if by_id else names(self.QUERY[10:])
        self.assertEqual(expected, self.classes(self.QUERY))
        self.assertEqual(expected, self.classes(self.QUERY,
                                                'placement 1.28'))
        mixed = ['DISK_GB', 'VCPU', 'MEMORY_MB'] if by_id else [
            'DISK_GB', 'MEMORY_MB', 'VCPU']
        self.assertEqual(mixed, self.classes(self.MIXED))
        suffixed = 'resources1=MEMORY_MB:64,DISK_GB:10,VCPU:1'
        self.assertEqual(['MEMORY_MB', 'DISK_GB', 'VCPU'],
                         self.classes(suffixed))

    def set_traits(self, uuid, traits):
        status, body = self.call('GET', '/resource_providers/' + uuid)
        status, _ = self.call(
            'PUT', '/resource_providers/%s/traits' % uuid,
            {'traits': traits,
             'resource_provider_generation': body['generation']})
        self.assertEqual(200, status)

    def check_each_case(self):
        self.assert_orders(by_id=False)
        parent = self.provider()
        child = self.provider()
        status, _ = self.call('PUT', '/resource_providers/' + child,
                              {'name': child,
                               'parent_provider_uuid': parent})
        self.assertEqual(200, status)
        self.assert_orders(by_id=True)
        sharing = self.provider()
        self.set_traits(sharing, ['MISC_SHARES_VIA_AGGREGATE'])
        self.assert_orders(by_id=True)
        status, _ = self.call('DELETE', '/resource_providers/' + child)
        self.assertEqual(204, status)
        self.assert_orders(by_id=True)
        self.set_traits(sharing, [])
        self.assert_orders(by_id=False)

    def test_kept_structure(self):
        self.check_each_case()

    def test_windows(self):
        candidate_cloud.read_in_windows(self, 1)
        self.check_each_case()

    def test_writes_in_plain_sql(self):
        """Another writer (upstream beside this server, an operator)
        gives a provider a parent, then the sharing trait to another:
        the structure this worker keeps must not answer for the old
        facts."""
        parent, child, sharing = (self.provider() for _ in range(3))
        self.assert_orders(by_id=False)
        rp = tables.resource_providers
        with self.db.write() as conn:
            ids = dict(conn.execute(sa.select(rp.c.uuid, rp.c.id)).all())
            conn.execute(rp.update().where(rp.c.uuid == child).values(
                parent_provider_id=ids[parent], root_provider_id=ids[parent]))
        self.assert_orders(by_id=True)
        with self.db.write() as conn:
            conn.execute(rp.update().where(rp.c.uuid == child).values(
                parent_provider_id=None, root_provider_id=ids[child]))
        self.assert_orders(by_id=False)
        with self.db.write() as conn:
            trait = conn.execute(
                sa.select(tables.traits.c.id).where(
                    tables.traits.c.name == 'MISC_SHARES_VIA_AGGREGATE')
            ).scalar()
            conn.execute(tables.resource_provider_traits.insert().values(
                resource_provider_id=ids[sharing], trait_id=trait))
        self.assert_orders(by_id=True)
