# SPDX-License-Identifier: Apache-2.0
"""db/structure.py: the database's triggers set a new stamp for every
write of the structure, and only for those.

Each API write that changes providers, inventories, traits, aggregates
or classes must leave a new structure stamp behind (a trigger missing
would leave a worker answering from a stale kept structure); writes that
change only usage and generations must keep it (else every claim would
make the workers read every tree again). One test per writer, so that a
gap names the route that fell through it. Writers other than this
server's API are tests/server/test_other_writers.py's. Runs on whichever
database OSC_PLACEMENT_TEST_DB_URL names.
"""

import uuid as uuidlib

from osc_placement.server.db import sync
from osc_placement.server.db import tables
from tests.server import test_kept_structure as kept

call = kept.call


class StampTestCase(kept.CloudTestCase):

    def assert_changes(self, write, expected=200):
        before = self.stamp()
        self.ok(write(), expected)
        self.assertNotEqual(before, self.stamp())

    def assert_keeps(self, write, expected=200):
        before = self.stamp()
        self.ok(write(), expected)
        self.assertEqual(before, self.stamp())

    def path(self, name, tail=''):
        return '/resource_providers/%s%s' % (self.uuids[name], tail)

    def custom_class(self, name='CUSTOM_GOLD'):
        self.ok(call(self.app, 'POST', '/resource_classes', {'name': name}),
                201)
        return name


class TestProviderWrites(StampTestCase):

    def test_create(self):
        self.assert_changes(lambda: call(
            self.app, 'POST', '/resource_providers',
            {'name': 'cn4', 'uuid': str(uuidlib.uuid4())}))

    def test_rename(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn3'), {'name': 'cn3-renamed'}))

    def test_move_under_another(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn3'),
            {'name': 'cn3', 'parent_provider_uuid': self.uuids['cn2']}))

    def test_delete(self):
        self.assert_changes(
            lambda: call(self.app, 'DELETE', self.path('cn3')), 204)


class TestInventoryWrites(StampTestCase):

    def body(self, name, **fields):
        return dict(fields, resource_provider_generation=self.generation(
            name))

    def test_create_one(self):
        self.assert_changes(lambda: call(
            self.app, 'POST', self.path('cn3', '/inventories'),
            {'resource_class': 'MEMORY_MB', 'total': 1024}), 201)

    def test_update_one(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn3', '/inventories/VCPU'),
            self.body('cn3', total=8)))

    def test_delete_one(self):
        self.assert_changes(lambda: call(
            self.app, 'DELETE', self.path('cn2', '/inventories/DISK_GB')),
            204)

    def test_set_all_adding(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn3', '/inventories'),
            self.body('cn3', inventories={'VCPU': {'total': 4},
                                          'MEMORY_MB': {'total': 512}})))

    def test_set_all_changing(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn3', '/inventories'),
            self.body('cn3', inventories={'VCPU': {'total': 6}})))

    def test_set_all_removing(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.path('cn2', '/inventories'),
            self.body('cn2', inventories={'VCPU': {'total': 4}})))

    def test_delete_all(self):
        self.assert_changes(lambda: call(
            self.app, 'DELETE', self.path('cn2', '/inventories')), 204)

    def test_reshape(self):
        self.assert_changes(lambda: call(
            self.app, 'POST', '/reshaper', {
                'inventories': {self.uuids['cn3']: self.body(
                    'cn3', inventories={'VCPU': {'total': 2}})},
                'allocations': {}}), 204)


class TestTraitWrites(StampTestCase):

    def test_create(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', '/traits/CUSTOM_FAST'), 201)

    def test_delete(self):
        self.ok(call(self.app, 'PUT', '/traits/CUSTOM_FAST'), 201)
        self.assert_changes(lambda: call(
            self.app, 'DELETE', '/traits/CUSTOM_FAST'), 204)

    def test_set_on_a_provider(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', self.traits_path('cn3'), {
                'traits': ['HW_CPU_X86_AVX2'],
                'resource_provider_generation': self.generation('cn3')}))

    def test_delete_from_a_provider(self):
        self.assert_changes(lambda: call(
            self.app, 'DELETE', self.traits_path('disk')), 204)

    def test_standard_traits_synced(self):
        """The start-up sync writes the standard traits missing."""
        with self.db.write() as conn:
            conn.execute(tables.traits.delete().where(
                tables.traits.c.name == 'HW_CPU_X86_SSE42'))
        before = self.stamp()
        sync.sync_standards(self.db)
        self.assertNotEqual(before, self.stamp())


class TestAggregateWrites(StampTestCase):

    def set(self, name, aggregates):
        return call(self.app, 'PUT', self.path(name, '/aggregates'), {
            'aggregates': aggregates,
            'resource_provider_generation': self.generation(name)})

    def test_new_aggregate(self):
        self.assert_changes(lambda: self.set('cn3', [str(uuidlib.uuid4())]))

    def test_existing_aggregate_added(self):
        self.assert_changes(lambda: self.set('cn3', [kept.AGG]))

    def test_removed(self):
        self.assert_changes(lambda: self.set('cn1', []))


class TestClassWrites(StampTestCase):

    def test_create(self):
        self.assert_changes(lambda: call(
            self.app, 'POST', '/resource_classes', {'name': 'CUSTOM_GOLD'}),
            201)

    def test_create_by_put(self):
        self.assert_changes(lambda: call(
            self.app, 'PUT', '/resource_classes/CUSTOM_GOLD', version='1.7'),
            201)

    def test_rename(self):
        self.custom_class()
        self.assert_changes(lambda: call(
            self.app, 'PUT', '/resource_classes/CUSTOM_GOLD',
            {'name': 'CUSTOM_SILVER'}, version='1.2'))

    def test_delete(self):
        self.custom_class()
        self.assert_changes(lambda: call(
            self.app, 'DELETE', '/resource_classes/CUSTOM_GOLD'), 204)


class TestWritesThatKeepTheStamp(StampTestCase):
    """Usage and generations are not structure."""

    def allocate(self, consumer, resources):
        return call(self.app, 'PUT', '/allocations/' + consumer, {
            'allocations': {self.uuids['cn1']: {'resources': resources}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    def test_claim(self):
        self.assert_keeps(
            lambda: self.allocate(str(uuidlib.uuid4()), {'VCPU': 1}), 204)

    def test_claims_of_several_consumers(self):
        consumers = {str(uuidlib.uuid4()): {
            'allocations': {self.uuids['cn2']: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'INSTANCE'} for _ in range(2)}
        self.assert_keeps(lambda: call(self.app, 'POST', '/allocations',
                                       consumers), 204)

    def test_allocations_replaced_and_deleted(self):
        consumer = self.claim('cn1', {'VCPU': 1})
        self.assert_keeps(lambda: call(
            self.app, 'PUT', '/allocations/' + consumer, {
                'allocations': {self.uuids['cn2']: {
                    'resources': {'VCPU': 2}}},
                'project_id': 'p', 'user_id': 'u', 'consumer_generation': 1,
                'consumer_type': 'INSTANCE'}), 204)
        self.assert_keeps(lambda: call(
            self.app, 'DELETE', '/allocations/' + consumer), 204)

    def test_same_aggregates_again(self):
        """A generation bump alone (1.19 bumps it on every PUT)."""
        self.assert_keeps(lambda: call(
            self.app, 'PUT', self.path('cn1', '/aggregates'), {
                'aggregates': [kept.AGG],
                'resource_provider_generation': self.generation('cn1')}))
