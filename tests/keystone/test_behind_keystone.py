# SPDX-License-Identifier: Apache-2.0
"""Our server and upstream Placement 16.0.0 behind one real Keystone
(fernet tokens from keystoneauth1's password plugin), on one database:
each role's answer from ours must be upstream's, a system-scoped admin is
refused everywhere, service tokens, revoked and expired tokens, and
Keystone stopped and started again.

One Keystone serves the whole suite (it is run with one worker); each
class starts one server of each side.
"""

import atexit
import contextlib
import os
import shutil
import tempfile
import time
import uuid

import testtools
from testtools import content

from tests.keystone import identity
from tests.keystone import placement

_KEYSTONE = []


def shared_keystone():
    """The suite's Keystone, started and populated on first use."""
    if not _KEYSTONE:
        keystone = identity.Keystone()
        atexit.register(keystone.remove)
        keystone.start()
        keystone.populate()
        _KEYSTONE.append(keystone)
    return _KEYSTONE[0]


# Users whose answers are compared, one token each.
COMPARED_USERS = ('project-admin', 'project-member', 'project-reader',
                  'project-service', 'system-admin', 'system-reader')
DEMO_RP = str(uuid.UUID(int=0x35))
CATALOG_REGIONS = {'ours': 'RegionOurs', 'upstream': 'RegionUpstream'}


def requests_of(tag, project_id):
    """(label, method, path, body, microversion) of the compared
    requests: reads, writes whose objects are named after ``tag`` alone
    (one per side and user, so each side answers the same whatever ran
    first), candidates, usages and the reshaper."""
    trait = 'CUSTOM_' + tag.upper().replace('-', '_')
    consumer = str(uuid.uuid5(uuid.NAMESPACE_URL, tag))
    rp_path = '/resource_providers/' + DEMO_RP
    return [
        ('list providers', 'GET', '/resource_providers', None, '1.39'),
        ('show provider', 'GET', rp_path, None, '1.39'),
        ('inventories', 'GET', rp_path + '/inventories', None, '1.39'),
        ('traits', 'GET', '/traits', None, '1.39'),
        ('resource classes', 'GET', '/resource_classes', None, '1.39'),
        ('candidates', 'GET', '/allocation_candidates?resources=VCPU:1',
         None, '1.39'),
        ('usages', 'GET', '/usages?project_id=' + project_id, None, '1.9'),
        ('provider usages', 'GET', rp_path + '/usages', None, '1.39'),
        ('create provider', 'POST', '/resource_providers',
         {'name': tag}, '1.39'),
        ('create trait', 'PUT', '/traits/' + trait, None, '1.39'),
        ('allocate', 'PUT', '/allocations/' + consumer,
         {'allocations': {DEMO_RP: {'resources': {'VCPU': 1}}},
          'project_id': project_id, 'user_id': project_id,
          'consumer_generation': None, 'consumer_type': 'INSTANCE'},
         '1.39'),
        ('delete unknown provider', 'DELETE',
         '/resource_providers/' + str(uuid.uuid5(uuid.NAMESPACE_URL,
                                                 'gone-' + tag)),
         None, '1.39'),
        # Schema-invalid: refused by policy, or a 400 once past it.
        ('reshape', 'POST', '/reshaper',
         {'inventories': {}, 'allocations': {}}, '1.30'),
    ]


class _BehindKeystone(testtools.TestCase):
    """Both sides on one fresh SQLite database, behind the shared
    Keystone, for the whole class."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = shared_keystone()
        cls.directory = tempfile.mkdtemp(prefix='ocp-keystone-db-')
        db_url = 'sqlite:///%s' % os.path.join(cls.directory, 'placement.db')
        cls.ours = placement.Ours(db_url, cls.keystone)
        cls.upstream = placement.Upstream(db_url, cls.keystone)
        cls.ours.db_sync()
        cls.stack = contextlib.ExitStack()
        try:
            cls.bases = {
                'ours': cls.stack.enter_context(cls.ours.serve()),
                'upstream': cls.stack.enter_context(cls.upstream.serve())}
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.stack.close()
        for side in (cls.ours, cls.upstream):
            side.remove_state()
        shutil.rmtree(cls.directory, ignore_errors=True)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.addOnException(self._attach_logs)

    def _attach_logs(self, exc_info):
        for side in (self.ours, self.upstream):
            self.addDetail('%s server log' % side.name,
                           content.text_content(side.log_tail(60)))
        self.addDetail('keystone log',
                       content.text_content(self.keystone.log_tail(60)))

    def both(self, method, path, token=None, service_token=None,
             body=None, version='1.39'):
        """{side: (status, body)} of one request to each side."""
        return {side: placement.request(base, method, path, token,
                                        service_token, body, version)
                for side, base in sorted(self.bases.items())}

    def statuses(self, method, path, token=None, service_token=None):
        return {side: answer[0] for side, answer in self.both(
            method, path, token, service_token).items()}


class TestRoleParity(_BehindKeystone):
    """Each role's status code (and each refusal's text) from ours is
    upstream's, for reads, writes, candidates, usages and the
    reshaper."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        admin = cls.keystone.token('project-admin')
        base = cls.bases['ours']
        for method, path, body in (
                ('POST', '/resource_providers',
                 {'name': 'keystone-compute', 'uuid': DEMO_RP}),
                ('PUT', '/resource_providers/%s/inventories' % DEMO_RP,
                 {'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 64}}})):
            status, answer = placement.request(base, method, path, admin,
                                               body=body)
            if status not in (200, 201):
                raise AssertionError('%s %s -> %s %s' % (
                    method, path, status, answer))
        cls.tokens = {user: cls.keystone.token(user)
                      for user in COMPARED_USERS}
        # Each side in a region of its own, as a deployment migrating
        # from one to the other might have them.
        for side, base in cls.bases.items():
            cls.keystone.register_placement(CATALOG_REGIONS[side], base)

    def answers(self, side, user, test):
        """{label: (status, body)} of the requests of ``user`` to
        ``side``, whose writes are named after the side, user and test."""
        project_id = self.keystone.project_ids[identity.PROJECT]
        tag = '%s-%s-%s' % (side, user, test)
        return {label: placement.request(
            self.bases[side], method, path, self.tokens[user], body=body,
            version=version)
            for label, method, path, body, version in requests_of(
                tag, project_id)}

    def test_each_roles_statuses_are_upstreams(self):
        table = []
        differences = []
        for user in COMPARED_USERS:
            theirs = self.answers('upstream', user, 'parity')
            ours = self.answers('ours', user, 'parity')
            for label in theirs:
                pair = (theirs[label][0], ours[label][0])
                table.append('%-16s %-24s upstream %d ours %d' % (
                    (user, label) + pair))
                if pair[0] != pair[1]:
                    differences.append(table[-1])
                elif pair[0] == 403 and (
                        placement.error_texts(theirs[label][1])
                        != placement.error_texts(ours[label][1])):
                    differences.append('%s %s 403 texts: %r != %r' % (
                        user, label, theirs[label][1], ours[label][1]))
        self.addDetail('statuses', content.text_content('\n'.join(table)))
        self.assertEqual([], differences)

    def test_project_admin_succeeds(self):
        # So that the comparison is not one of two identical failures.
        answers = self.answers('ours', 'project-admin', 'admin')
        statuses = {label: answer[0] for label, answer in answers.items()}
        expected = dict.fromkeys(statuses, 200)
        expected.update({'create trait': 201, 'allocate': 204,
                         'delete unknown provider': 404,
                         # The reshaper is the service role's alone.
                         'reshape': 403})
        self.assertEqual(expected, statuses)

    def test_catalog_leads_to_each_side(self):
        # As a client finds Placement: keystoneauth1 and the catalog.
        session = self.keystone.session('project-admin')
        for side, region in sorted(CATALOG_REGIONS.items()):
            response = session.get(
                '/resource_providers', endpoint_filter={
                    'service_type': 'placement', 'interface': 'public',
                    'region_name': region},
                headers={'OpenStack-API-Version': 'placement 1.39'})
            self.assertEqual(200, response.status_code)
            self.assertTrue(response.url.startswith(self.bases[side]),
                            response.url)
            self.assertIn('keystone-compute', response.text)

    def test_system_scoped_admin_is_refused_everywhere(self):
        project_id = self.keystone.project_ids[identity.PROJECT]
        token = self.keystone.token('system-admin')
        statuses = {label: placement.request(
            self.bases['ours'], method, path, token, body=body,
            version=version)[0]
            for label, method, path, body, version in requests_of(
                'ours-system-admin-scope', project_id)}
        self.assertEqual({label: 403 for label in statuses}, statuses)

    def test_service_token_beside_a_users_token(self):
        service = self.keystone.token('project-service')
        for user in ('project-admin', 'project-reader'):
            token = self.tokens[user]
            for method, path in (('GET', '/resource_providers'),
                                 ('GET', '/usages?project_id=x')):
                statuses = self.statuses(method, path, token, service)
                self.assertEqual(statuses['upstream'], statuses['ours'],
                                 '%s %s as %s' % (method, path, user))
        # A valid user token with a refused service token is refused.
        statuses = self.statuses('GET', '/resource_providers',
                                 self.tokens['project-admin'],
                                 'not-a-token')
        self.assertEqual({'ours': 401, 'upstream': 401}, statuses)

    def test_revoked_token_is_refused(self):
        token = self.keystone.token('project-admin')
        self.assertEqual({'ours': 200, 'upstream': 200},
                         self.statuses('GET', '/resource_providers', token))
        self.keystone.revoke(token)
        self.assertEqual({'ours': 401, 'upstream': 401},
                         self.statuses('GET', '/resource_providers', token))

    def test_no_token_and_a_forged_token_are_refused(self):
        self.assertEqual({'ours': 401, 'upstream': 401},
                         self.statuses('GET', '/resource_providers'))
        self.assertEqual({'ours': 401, 'upstream': 401},
                         self.statuses('GET', '/resource_providers',
                                       'gAAAAAB' + 'x' * 170))


# How long tokens last while the expiry is under test: long enough to
# make two requests with one, short enough to wait out.
SHORT_TOKEN_SECONDS = 5


class TestKeystoneLifecycle(_BehindKeystone):
    """Keystone stopped and back, and tokens that expire."""

    def test_keystone_down_then_back(self):
        token = self.keystone.token('project-admin')
        self.keystone.stop()
        try:
            down = self.both('GET', '/resource_providers', token)
        finally:
            self.keystone.start()
        self.addDetail('while Keystone is down', content.text_content(
            repr(down)))
        self.assertEqual(down['upstream'][0], down['ours'][0])
        self.assertEqual(placement.error_texts(down['upstream'][1]),
                         placement.error_texts(down['ours'][1]))
        fresh = self.keystone.token('project-admin')
        self.assertEqual({'ours': 200, 'upstream': 200},
                         self.statuses('GET', '/resource_providers', fresh))

    def test_expired_token_is_refused(self):
        self.keystone.restart(token_seconds=SHORT_TOKEN_SECONDS)
        try:
            token = self.keystone.token('project-admin')
            issued = time.monotonic()
            self.assertEqual(
                {'ours': 200, 'upstream': 200},
                self.statuses('GET', '/resource_providers', token))
        finally:
            # Tokens issued from now on last as long as the other tests'.
            self.keystone.restart(token_seconds=3600)
        time.sleep(max(0, issued + SHORT_TOKEN_SECONDS + 1
                       - time.monotonic()))
        self.assertEqual({'ours': 401, 'upstream': 401},
                         self.statuses('GET', '/resource_providers', token))
